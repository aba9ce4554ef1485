import CLibraryLoader
import Glibc
import Testing

/// The loader every generated C binding shares (Sources/CLibraryLoader): one message per way a
/// library cannot be used, asked once and kept; no function published unless all were found and
/// the first call succeeded. (A library found but not loadable, end to end: MissingLibraryTests.)
@Suite("the C bindings' loader: one answer when a library cannot be used")
struct LibraryLoaderTests {
    /// A library description as a generated binding declares one (C strings freed by `close`).
    final class Library {
        let library = UnsafeMutablePointer<iapctl_library>.allocate(capacity: 1)
        let names: UnsafeMutablePointer<UnsafePointer<CChar>?>
        let slots: UnsafeMutablePointer<UnsafeMutableRawPointer?>
        let count: Int
        private var strings: [UnsafeMutablePointer<CChar>] = []

        init(
            soname: String, package: String, functions: [String],
            afterOpen: (@convention(c) (UnsafePointer<UnsafeMutableRawPointer?>?) -> UnsafePointer<CChar>?)? = nil
        ) {
            count = functions.count
            names = .allocate(capacity: max(count, 1))
            slots = .allocate(capacity: max(count, 1))
            slots.initialize(repeating: nil, count: max(count, 1))
            for (i, name) in functions.enumerated() { names[i] = UnsafePointer(keep(name)) }
            library.initialize(to: iapctl_library())
            library.pointee.soname = UnsafePointer(keep(soname))
            library.pointee.package = UnsafePointer(keep(package))
            library.pointee.names = UnsafePointer(names)
            library.pointee.slots = slots
            library.pointee.count = count
            library.pointee.after_open = afterOpen
        }

        private func keep(_ text: String) -> UnsafeMutablePointer<CChar> {
            let copy = strdup(text)!
            strings.append(copy)
            return copy
        }

        deinit {
            strings.forEach { free($0) }
            names.deallocate()
            slots.deallocate()
            library.deallocate()
        }

        var unavailable: String? { iapctl_library_unavailable(library).map { String(cString: $0) } }
        var published: [UnsafeMutableRawPointer?] { (0..<count).map { slots[$0] } }
    }

    @Test func aLibraryNotInstalledIsNamedWithItsPackage() {
        let library = Library(soname: "libiapctl-absent.so.7", package: "iapctl-absent7", functions: ["f"])
        #expect(library.unavailable == "libiapctl-absent.so.7 is not installed: apt-get install iapctl-absent7")
        #expect(library.unavailable == "libiapctl-absent.so.7 is not installed: apt-get install iapctl-absent7", "kept")
        #expect(library.published == [nil])
    }

    /// zlib1g is a required Debian package: libz.so.1 is always there.
    @Test func aMissingFunctionIsNamedAndNothingIsPublished() {
        let library = Library(soname: "libz.so.1", package: "zlib1g", functions: ["crc32", "iapctl_no_such_function"])
        #expect(
            library.unavailable
                == "libz.so.1 has no function iapctl_no_such_function (too old a version): apt-get install zlib1g")
        #expect(library.published == [nil, nil], "crc32 was found, but the library is not usable")
    }

    @Test func aFailedFirstCallMakesTheLibraryUnavailable() {
        let library = Library(soname: "libz.so.1", package: "zlib1g", functions: ["crc32"]) { slots in
            // Called with every function found, before any is published.
            guard let slots, slots[0] != nil else { return nil }
            return UnsafeRawPointer(("zlib refused to start" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
        }
        #expect(library.unavailable == "libz.so.1 could not start: zlib refused to start")
        #expect(library.published == [nil])
    }

    @Test func aLibraryWithEveryFunctionIsLoadedOnceAndPublished() throws {
        let library = Library(soname: "libz.so.1", package: "zlib1g", functions: ["crc32", "adler32"])
        #expect(library.unavailable == nil)
        #expect(library.published.allSatisfy { $0 != nil })
        let crc32 = try #require(iapctl_library_function(library.library, 0))
        #expect(crc32 == library.slots[0])
        typealias CRC32 = @convention(c) (UInt, UnsafePointer<UInt8>?, UInt32) -> UInt
        let check = Array("123456789".utf8).withUnsafeBufferPointer {
            unsafeBitCast(crc32, to: CRC32.self)(0, $0.baseAddress, UInt32($0.count))
        }
        #expect(check == 0xCBF4_3926, "the function found is zlib's crc32")
    }
}
