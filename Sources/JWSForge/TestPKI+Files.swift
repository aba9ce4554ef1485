import Foundation

extension TestPKI {
    /// File names used by `save(to:)` and `load(directory:)`.
    public enum FileName {
        public static let root = "root.pem"
        public static let intermediate = "intermediate.pem"
        public static let leaf = "leaf.pem"
        public static let leafKey = "leaf.key"
    }

    /// Loads a chain saved by `save(to:)`: root.pem, intermediate.pem, leaf.pem, leaf.key.
    public static func load(directory: String) throws -> TestPKI {
        func read(_ name: String) throws -> String {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ForgeError("cannot read \(path)")
            }
            return String(decoding: data, as: UTF8.self)
        }
        return try load(
            rootPEM: try read(FileName.root), intermediatePEM: try read(FileName.intermediate),
            leafPEM: try read(FileName.leaf), leafKeyPEM: try read(FileName.leafKey))
    }

    /// Writes root.pem, intermediate.pem, leaf.pem and leaf.key (mode 0600) into `directory`, creating it.
    public func save(to directory: String) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let files: [(String, String, Int)] = [
            (FileName.root, try root.pem(), 0o644),
            (FileName.intermediate, try intermediate.pem(), 0o644),
            (FileName.leaf, try leaf.pem(), 0o644),
            (FileName.leafKey, try leafPrivateKeyPEM(), 0o600),
        ]
        for (name, text, mode) in files {
            let path = (directory as NSString).appendingPathComponent(name)
            guard fm.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode]) else {
                throw ForgeError("cannot write \(path)")
            }
        }
    }
}
