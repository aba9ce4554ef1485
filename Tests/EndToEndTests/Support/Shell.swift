import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `command` with `/bin/sh -c` in this process's environment and waits for it; its exit
/// status, or -1 when it could not be started or a signal ended it.
func shellStatus(_ command: String) -> Int32 {
    var pid: pid_t = 0
    let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
    defer { for arg in argv { free(arg) } }
    guard posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0 else { return -1 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
}

/// The variables a test-server script prints as `export NAME='value'` lines (`scripts/
/// mariadb-test-server start`, `scripts/postgres-test-server start|start-pair`); other lines are skipped.
func scriptExports(_ text: String) -> [String: String] {
    var exports: [String: String] = [:]
    for line in text.split(separator: "\n") where line.hasPrefix("export ") {
        let assignment = line.dropFirst("export ".count)
        guard let equals = assignment.firstIndex(of: "=") else { continue }
        exports[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
            .trimmingCharacters(in: CharacterSet(charactersIn: "'"))
    }
    return exports
}
