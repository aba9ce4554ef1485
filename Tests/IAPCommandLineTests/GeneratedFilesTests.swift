import Foundation
import StoreTestSupport
import Testing

@testable import IAPCommandLine

/// The committed completions/ and man/ must be what the code generates (run scripts/generate).
@Suite("Generated completions and man pages")
struct GeneratedFilesTests {
    func committed(_ relativePath: String) throws -> String {
        try String(contentsOf: packageRoot.appendingPathComponent(relativePath), encoding: .utf8)
    }

    @Test(arguments: [
        ("bash", "completions/iapctl.bash"), ("zsh", "completions/_iapctl"), ("fish", "completions/iapctl.fish"),
    ])
    func completionsInSync(shell: String, file: String) throws {
        let result = iapctl(["completion", shell])
        #expect(result.code == 0)
        #expect(try committed(file) == result.out, "\(file) is stale: run scripts/generate")
    }

    @Test func manPagesInSync() throws {
        let pages = ManPages.pages(root: CommandTree.root)
        let folder = packageRoot.appendingPathComponent("man")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".1") }
        #expect(Set(names) == Set(pages.map(\.fileName)), "man/ has stale pages: run scripts/generate")
        for page in pages {
            #expect(try committed("man/" + page.fileName) == page.contents, "man/\(page.fileName) is stale")
        }
    }

    @Test func manCommandWritesThePages() throws {
        let folder = try temporaryDirectory()
        let result = iapctl(["__man", folder.path])
        #expect(result.code == 0, "\(result.err)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(names.contains("iapctl.1"))
        #expect(names.contains("iapctl-orders.1"))
        #expect(iapctl(["__man", folder.path + "/nope"]).code == 66)
    }

    @Test func completionsCoverTheModel() {
        let bash = iapctl(["completion", "bash"]).out
        let zsh = iapctl(["completion", "zsh"]).out
        let fish = iapctl(["completion", "fish"]).out
        for script in [bash, zsh, fish] {
            #expect(script.contains("grace_period"))
            #expect(script.contains("transfer-if-inactive"))
            #expect(script.contains("LocalTesting"))
            #expect(script.contains("ndjson"))
            #expect(script.contains("--replay-unmatched") || script.contains("-l replay-unmatched"))
            #expect(!script.contains("__man"))
        }
        #expect(bash.contains("'orders list')"))
        #expect(zsh.hasPrefix("#compdef iapctl"))
        #expect(fish.contains("__iapctl_at \"orders list\""))
    }

    @Test(.enabled(if: Programs.which("bash") != nil, "bash is not installed"))
    func bashSyntax() throws {
        let path = packageRoot.appendingPathComponent("completions/iapctl.bash").path
        let result = try Programs.run(Programs.which("bash")!, ["-n", path])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test(.enabled(if: Programs.which("bash") != nil, "bash is not installed"))
    func bashCompletesValues() throws {
        let path = packageRoot.appendingPathComponent("completions/iapctl.bash").path
        let script = """
            source '\(path)'
            COMP_WORDS=(iapctl orders list --status p); COMP_CWORD=4; _iapctl; echo "${COMPREPLY[*]}"
            COMP_WORDS=(iapctl ord); COMP_CWORD=1; _iapctl; echo "${COMPREPLY[*]}"
            COMP_WORDS=(iapctl contracts list --st); COMP_CWORD=3; _iapctl; echo "${COMPREPLY[*]}"
            """
        let result = try Programs.run(Programs.which("bash")!, ["-c", script])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output == "pending paid\norders\n--status\n")
    }

    @Test(.enabled(if: Programs.which("zsh") != nil, "zsh is not installed"))
    func zshSyntax() throws {
        let path = packageRoot.appendingPathComponent("completions/_iapctl").path
        let result = try Programs.run(Programs.which("zsh")!, ["-n", path])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test(.enabled(if: Programs.which("fish") != nil, "fish is not installed"))
    func fishSyntax() throws {
        let path = packageRoot.appendingPathComponent("completions/iapctl.fish").path
        let result = try Programs.run(Programs.which("fish")!, ["--no-execute", path])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test(.enabled(if: Programs.which("fish") != nil, "fish is not installed"))
    func fishCompletesValues() throws {
        let path = packageRoot.appendingPathComponent("completions/iapctl.fish").path
        let result = try Programs.run(
            Programs.which("fish")!, ["--no-config", "-c", "source '\(path)'; complete -C 'iapctl contracts list --status gr'"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.hasPrefix("grace_period"))
    }

    @Test(.enabled(if: Programs.which("mandoc") != nil, "mandoc is not installed"))
    func manPagesLintClean() throws {
        let folder = packageRoot.appendingPathComponent("man")
        let pages = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".1") }
            .sorted().map { folder.appendingPathComponent($0).path }
        let result = try Programs.run(Programs.which("mandoc")!, ["-T", "lint"] + pages)
        #expect(result.status == 0 && result.output.isEmpty, "\(result.output)")
    }
}

/// The committed C bindings (Sources/C*/include/C*.h and loader.c) must be what scripts/c-bindings
/// makes of each target's bindings.list and the real headers (run scripts/c-bindings).
@Suite("Generated C bindings")
struct GeneratedBindingsTests {
    @Test(
        .enabled(
            if: Programs.which("gcc") != nil && Programs.which("python3") != nil,
            "scripts/c-bindings needs gcc and python3 (scripts/setup installs them)"))
    func bindingsInSyncWithTheirLists() throws {
        let script = packageRoot.appendingPathComponent("scripts/c-bindings").path
        let check = try Programs.run(Programs.which("python3")!, [script, "--check"])
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.isEmpty, "\(check.output)")
    }
}
