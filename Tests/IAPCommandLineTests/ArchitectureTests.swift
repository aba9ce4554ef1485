import Foundation
import Testing

/// ARCHITECTURE.md's module table says what each module may import; this keeps the code and the
/// table in step: every `import` of one of the project's modules in `Sources/<Module>` must be one
/// the module's row names (IAPFoundation, the leaf of basics, is open to every module but itself;
/// the modules of one row may use each other).
@Suite("ARCHITECTURE.md's import rules hold")
struct ArchitectureTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The project's modules: the folders under `Sources`.
    static func modules() throws -> Set<String> {
        let names = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path)
        return Set(names.filter { !$0.hasPrefix(".") })
    }

    /// The module table: each module of a row (a row may name two) with the text of its last cell.
    static func table() throws -> [(modules: [String], mayImport: String)] {
        let text = try String(contentsOf: root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        var rows: [(modules: [String], mayImport: String)] = []
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 4 else { continue }
            let names = cells[1].split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) }
            rows.append((names, cells[cells.count - 2]))
        }
        return rows
    }

    /// The project modules a module's Swift files import (`import X`, `@_exported import X`, …).
    static func imports(of module: String, among modules: Set<String>) throws -> [String: String] {
        var found: [String: String] = [:]
        let folder = root.appendingPathComponent("Sources/\(module)")
        guard let files = FileManager.default.enumerator(atPath: folder.path) else { return [:] }
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ").map(String.init)
                guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                    words[..<index].allSatisfy({ ["@_exported", "public", "package", "internal"].contains($0) })
                else { continue }
                let name = words[index + 1]
                if modules.contains(name), name != module { found[name] = "\(module)/\(file)" }
            }
        }
        return found
    }

    @Test func everyModulesImportsAreTheOnesItsRowAllows() throws {
        let modules = try Self.modules()
        let rows = try Self.table()
        var listedAbove: Set<String> = []
        var checked = 0
        for (names, cell) in rows {
            let words = Set(cell.components(separatedBy: CharacterSet.alphanumerics.inverted))
            for name in names {
                // A row's own modules may use each other (jwsforge is JWSForge's command).
                var allowed = words.intersection(modules).union(names)
                if name != "IAPFoundation" { allowed.insert("IAPFoundation") }
                if cell.contains("their C library") {
                    let library = ["SQLiteStore": "CSQLite", "MySQLStore": "CMariaDB", "PostgresStore": "CPostgres"]
                    allowed.formUnion(library[name].map { [$0] } ?? [])
                }
                if cell.contains("all of the above") { allowed.formUnion(listedAbove) }
                for (imported, file) in try Self.imports(of: name, among: modules).sorted(by: { $0.key < $1.key }) {
                    #expect(
                        allowed.contains(imported),
                        "\(file) imports \(imported), which ARCHITECTURE.md's row for \(name) does not allow (\(cell))")
                }
                checked += 1
            }
            listedAbove.formUnion(names)
            listedAbove.formUnion(["CSQLite", "CMariaDB", "CPostgres", "COpenSSL", "CCurl", "CZstd", "CZlib", "CProcess"])
        }
        // Every Swift module has a row (the C modules are module maps; `iapctl` is main.swift).
        let swiftModules = modules.subtracting([
            "CLibraryLoader", "CSQLite", "CMariaDB", "CPostgres", "COpenSSL", "CCurl", "CZstd", "CZlib", "CProcess", "iapctl",
        ])
        #expect(Set(rows.flatMap(\.modules)) == swiftModules)
        #expect(checked == swiftModules.count)
    }

    /// The check above can fail: a row that allows nothing finds the imports that are there.
    @Test func anImportTheRowDoesNotNameIsFound() throws {
        let found = try Self.imports(of: "StoreSQL", among: try Self.modules())
        #expect(found["SubscriptionModel"] != nil)
    }

    /// The map stays a map: at most 900 words, every module's purpose in at most 25, and
    /// every module under `Sources` has a row.
    @Test func theMapStaysShortAndNamesEveryModule() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let words = text.split(whereSeparator: { $0.isWhitespace }).count
        #expect(words <= 900, "ARCHITECTURE.md has \(words) words: move details to a module README")
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
            guard cells.count >= 4 else { continue }
            let purpose = cells[2].split(whereSeparator: { $0.isWhitespace }).count
            #expect(purpose <= 25, "\(cells[1]) has a purpose of \(purpose) words")
        }
        let named = Set(try Self.table().flatMap(\.modules))
        let cOnly = try Self.modules().filter { $0.hasPrefix("C") && $0.dropFirst().first?.isUppercase == true }
        let missing = try Self.modules().subtracting(named).subtracting(cOnly).subtracting(["iapctl"])
        #expect(missing.isEmpty, "modules without a row: \(missing.sorted())")
    }
}
