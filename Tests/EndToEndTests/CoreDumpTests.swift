import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A process holding a database password (and, the same way, a key or a JWT) leaves no core dump:
/// iapctl runs not dumpable and with a core file size limit of 0, whatever limit it was started with.
@Suite("secrets out of core dumps")
struct CoreDumpTests {
    /// A Unix socket that takes connections and never answers: a MySQL client waits there for the
    /// server's greeting.
    final class SilentServer {
        let path: String
        let fd: Int32

        init(path: String) throws {
            self.path = path
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw HarnessError("socket: \(errno)") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw HarnessError("path too long") }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, byte) in bytes.enumerated() { raw[i] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0, listen(fd, 4) == 0 else { throw HarnessError("bind/listen \(path): \(errno)") }
        }

        /// Waits up to `seconds` for a client; its connection (kept open, never written to), or nil.
        func accept(within seconds: Int32) -> Int32? {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, seconds * 1000) == 1 else { return nil }
            let client = Glibc.accept(fd, nil, nil)
            return client >= 0 ? client : nil
        }

        deinit {
            close(fd)
            unlink(path)
        }
    }

    /// The soft and hard "Max core file size" of `/proc/PID/limits`.
    static func coreLimit(_ pid: pid_t) throws -> String {
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let line = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        return line.dropFirst("Max core file size".count).split(separator: " ").prefix(2).joined(separator: " ")
    }

    /// Whether a SIGABRT'ed process can leave a core file in its folder here (the system-wide
    /// `core_pattern` is a file name, not a pipe to a collector).
    static var coresAreFiles: Bool {
        let pattern = (try? String(contentsOfFile: "/proc/sys/kernel/core_pattern", encoding: .utf8)) ?? "|"
        return !pattern.hasPrefix("|") && !pattern.hasPrefix("/")
    }

    /// Starts `argv` with no signal blocked and SIGABRT's default action (whatever the test
    /// runner's thread blocks), stdin/stdout/stderr on /dev/null.
    static func spawn(_ argv: [String], environment: [String: String]) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGABRT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var files = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&files)
        defer { posix_spawn_file_actions_destroy(&files) }
        for fd: Int32 in 0...2 { posix_spawn_file_actions_addopen(&files, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let arguments = argv.map { strdup($0) } + [nil]
        let variables = environment.map { strdup("\($0)=\($1)") } + [nil]
        defer { for pointer in arguments + variables { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, argv[0], &files, &attributes, arguments, variables)
        guard code == 0 else { throw HarnessError("posix_spawn \(argv[0]): \(code)") }
        return pid
    }

    /// The owner of `/proc/PID/status`: root while the process is not dumpable, else the process's own uid.
    static func procOwner(_ pid: pid_t) -> uid_t? {
        var info = stat()
        return stat("/proc/\(pid)/status", &info) == 0 ? info.st_uid : nil
    }

    @Test func aProcessHoldingADatabasePasswordLeavesNoCoreOnSIGABRT() throws {
        let cli = try CLI()
        // Run as a user other than root (nobody, when the tests run as root): a not-dumpable process's
        // /proc files then belong to root instead of to it. Its binary, socket and folder are in a
        // folder of their own that nobody may enter (the checkout's folders may not be).
        let asNobody = getuid() == 0
        var template = Array("/tmp/iapctl-core-XXXXXX".utf8CString)
        let shared = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) })
        defer { try? FileManager.default.removeItem(atPath: shared) }
        let binary = shared + "/iapctl"
        try FileManager.default.copyItem(atPath: CLI.binary.path, toPath: binary)
        let server = try SilentServer(path: shared + "/silent.sock")
        let folder = shared + "/cwd"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if asNobody {
            chmod(shared, 0o755)
            chmod(binary, 0o755)
            chmod(folder, 0o777)
            chmod(server.path, 0o777)
        }

        // Started with cores allowed, as `ulimit -c unlimited` in a shell; the Swift runtime's
        // backtracer off, so SIGABRT gets its default action (a core dump, where allowed).
        let shell = [
            "/bin/bash", "-c", #"cd "$1" && ulimit -c unlimited && exec "$0" "${@:2}""#, binary, folder, "db",
            "status", "--db", "mysql://iapctl@localhost/iapctl_core?socket=\(server.path)",
        ]
        let environment = cli.environment.merging([
            "IAPCTL_DB_PASSWORD": "core-dump-canary-\(UUID().uuidString)", "SWIFT_BACKTRACE": "enable=no", "HOME": folder,
        ]) { $1 }
        let pid = try Self.spawn(
            asNobody ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + shell : shell,
            environment: environment)
        var reaped = false
        defer {
            if !reaped {
                kill(pid, SIGKILL)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
            }
        }

        // Connected: the password has been read, and iapctl now waits for the server's greeting.
        let connection = try #require(server.accept(within: 10), "iapctl never connected to the socket")
        defer { close(connection) }
        #expect(try Self.coreLimit(pid) == "0 0", "core file size limit while holding a password")
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let uid = status.split(separator: "\n").first { $0.hasPrefix("Uid:") }?.split(separator: "\t").dropFirst().first
        #expect(uid != nil && uid != "0", "\(status)")
        #expect(Self.procOwner(pid) == 0, "the process is dumpable: its /proc files belong to uid \(uid ?? "?")")

        kill(pid, SIGABRT)
        var wait: Int32 = 0
        #expect(waitpid(pid, &wait, 0) == pid)
        reaped = true
        // Killed by the signal (WIFSIGNALED, WTERMSIG), and no core dumped (WCOREDUMP).
        #expect(wait & 0x7f == SIGABRT, "wait status \(wait)")
        #expect(wait & 0x80 == 0, "the kernel dumped a core (wait status \(wait))")
        if Self.coresAreFiles {
            let left = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("core") }
            #expect(left.isEmpty, "core files written: \(left)")
        }
    }
}
