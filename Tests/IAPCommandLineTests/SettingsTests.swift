import Foundation
import Testing

@testable import IAPCommandLine

@Suite("Settings: flag > environment > config file > default")
struct SettingsTests {
    func writeConfig(_ text: String) throws -> String {
        let url = try temporaryDirectory().appendingPathComponent("iapctl.json")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test func defaults() {
        let result = iapctl(["orders", "list"], environment: ["USER": "alice"], handlers: probeHandlers())
        #expect(result.code == 0, "\(result.err)")
        #expect(result.out.contains("db=iapctl.db [defaultValue]"))
        #expect(result.out.contains("output=table [defaultValue]"))
    }

    @Test func precedence() throws {
        let config = try writeConfig(#"{"db": "from-file.db", "actor": "file-actor", "output": "csv"}"#)
        let environment = ["IAPCTL_CONFIG": config, "IAPCTL_DB": "from-env.db"]
        let fileOnly = iapctl(["orders", "list"], environment: environment, handlers: probeHandlers())
        #expect(fileOnly.code == 0, "\(fileOnly.err)")
        #expect(fileOnly.out.contains("db=from-env.db [environment(\"IAPCTL_DB\")]"))
        #expect(fileOnly.out.contains("actor=file-actor [configFile("))
        #expect(fileOnly.out.contains("output=csv [configFile("))
        let flag = iapctl(["orders", "list", "--db", "flag.db"], environment: environment, handlers: probeHandlers())
        #expect(flag.out.contains("db=flag.db [commandLine]"))
        let noEnv = iapctl(["orders", "list", "--config", config], handlers: probeHandlers())
        #expect(noEnv.out.contains("db=from-file.db [configFile("))
    }

    @Test func trustSettingsFromEveryPlace() throws {
        let config = try writeConfig(
            #"{"bundle-id": "com.file", "environment": ["Sandbox", "xcode"], "app-apple-id": 123, "root-ca": "ca.pem"}"#
        )
        let result = iapctl(
            ["notify", "--config", config], environment: ["IAPCTL_APP_APPLE_ID": "456"], handlers: probeHandlers())
        #expect(result.code == 0, "\(result.err)")
        #expect(result.out.contains("bundle-id=com.file"))
        #expect(result.out.contains("app-apple-id=456 [environment"))
        #expect(result.out.contains("environment=Sandbox,Xcode"))
        #expect(result.out.contains("root-ca=ca.pem"))
        #expect(result.out.contains("at=signed [defaultValue]"))
    }

    @Test func requiredOptionSatisfiedByEnvironment() {
        let missing = iapctl(["notify"], handlers: probeHandlers())
        #expect(missing.code == 64)
        #expect(missing.err.contains("missing required option --bundle-id"))
        #expect(missing.err.contains("IAPCTL_BUNDLE_ID"))
        let fromEnvironment = iapctl(["notify"], environment: ["IAPCTL_BUNDLE_ID": "com.x"], handlers: probeHandlers())
        #expect(fromEnvironment.code == 0)
        #expect(fromEnvironment.out.contains("environment=Production"))
    }

    @Test(arguments: [
        ("{not json", "not valid JSON: line 1, column 2"),
        (#"["db"]"#, "expected a JSON object"),
        (#"{"dbb": "x"}"#, "unknown setting 'dbb'"),
        (#"{"db": 3.5}"#, "'db' must be a string"),
        (#"{"environment": [1, true]}"#, "'environment' must be a string or an array of strings"),
        (#"{"output": "yaml"}"#, "'yaml' is not a valid format"),
        (#"{"no-color": "yes"}"#, "'no-color' must be true or false"),
    ])
    func badConfigFileExits78(text: String, message: String) throws {
        let path = try writeConfig(text)
        let result = iapctl(["orders", "list", "--config", path], handlers: probeHandlers())
        #expect(result.code == 78)
        #expect(result.out.isEmpty)
        #expect(result.err.contains(path))
        #expect(result.err.contains(message), "\(result.err)")
    }

    @Test func missingConfigFileExits78() {
        let result = iapctl(["orders", "list"], environment: ["IAPCTL_CONFIG": "/nonexistent/iapctl.json"])
        #expect(result.code == 78)
        #expect(result.err.contains("/nonexistent/iapctl.json"))
        #expect(result.err.contains("No such file"))
    }

    @Test func badEnvironmentValueExits78() {
        let result = iapctl(
            ["notify", "--bundle-id", "b"], environment: ["IAPCTL_APP_APPLE_ID": "abc"],
            handlers: probeHandlers())
        #expect(result.code == 78)
        #expect(result.err.contains("IAPCTL_APP_APPLE_ID"))
    }

    @Test func colourOnlyOnATerminalWithoutNoColor() {
        #expect(iapctl(["orders", "list"], tty: true, handlers: probeHandlers()).out.contains("color=true"))
        #expect(iapctl(["orders", "list"], tty: false, handlers: probeHandlers()).out.contains("color=false"))
        #expect(
            iapctl(["orders", "list"], environment: ["NO_COLOR": "1"], tty: true, handlers: probeHandlers())
                .out.contains("color=false"))
        #expect(
            iapctl(["orders", "list", "--no-color"], tty: true, handlers: probeHandlers()).out.contains("color=false"))
    }

    @Test func verboseShowsWhereSettingsCameFrom() {
        let result = iapctl(["orders", "list", "-v"], environment: ["IAPCTL_DB": "e.db"], handlers: probeHandlers())
        #expect(result.err.contains("setting db = e.db (environment IAPCTL_DB)"))
        let quiet = iapctl(
            ["orders", "list", "-v", "-q"], environment: ["IAPCTL_DB": "e.db"], handlers: probeHandlers())
        #expect(quiet.err.isEmpty)
    }

    @Test func actorDefaultsToTheOSUser() throws {
        let parsed = try CommandLineParser(root: CommandTree.root).parse(["orders", "list"])
        let settings = try Settings.resolve(parsed, environment: [:], root: CommandTree.root)
        let invocation = Invocation(
            parsed: parsed, settings: settings, environment: ["USER": "bob"], stdin: InputReader(string: ""),
            stdout: BufferSink(), stderr: BufferSink(), isStdoutTTY: false, root: CommandTree.root)
        #expect(invocation.actor == "bob")
        let explicit = try CommandLineParser(root: CommandTree.root).parse(["orders", "list", "--actor", "ops"])
        let invocation2 = Invocation(
            parsed: explicit, settings: try Settings.resolve(explicit, environment: [:], root: CommandTree.root),
            environment: ["USER": "bob"], stdin: InputReader(string: ""), stdout: BufferSink(), stderr: BufferSink(),
            isStdoutTTY: false, root: CommandTree.root)
        #expect(invocation2.actor == "ops")
    }
}
