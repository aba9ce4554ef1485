// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "iapctl",
    products: [
        .executable(name: "iapctl", targets: ["iapctl"])
    ],
    targets: [
        // SQLite: <sqlite3.h> from libsqlite3-dev at build time; libsqlite3.so.0 is loaded with dlopen when
        // the first SQLite database is opened (not linked: `--version`, `verify` and MySQL runs skip it).
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // OpenSSL 3: headers from libssl-dev at build time; libcrypto.so.3 (Debian's libssl3) is loaded with
        // dlopen on the first call of any of its functions (loader.c), not linked: `--version` and the
        // commands that never hash or verify skip it.
        .target(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            // DWARF 4: valgrind 3.19 (callgrind, scripts/bench's instruction counts) cannot read clang's DWARF 5.
            cSettings: [.unsafeFlags(["-gdwarf-4"])]
        ),
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CMariaDB",
            path: "Sources/CMariaDB",
            providers: [.apt(["libmariadb-dev"])]
        ),
        // libpq (libpq.so.5 loaded on first use: see the shim).
        .systemLibrary(
            name: "CPostgres",
            path: "Sources/CPostgres",
            providers: [.apt(["libpq-dev"])]
        ),
        .systemLibrary(
            name: "CZstd",
            path: "Sources/CZstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        // zlib's crc32 for the check of ledger rows written before issue 25 (libz.so.1 loaded on
        // first use; no header package: see the shim).
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib"
        ),
        // Leaf basics every module may use: JSON value/parser/writer, strict base64, timestamps and
        // the clock, trimming. Imports only FoundationEssentials.
        .target(
            name: "IAPFoundation"
        ),
        // SHA-256 from libcrypto, the one wrapper (IAPFoundation links no C library).
        .target(
            name: "CryptoDigest",
            dependencies: ["COpenSSL"]
        ),
        .target(
            name: "AppStoreJWS",
            dependencies: ["IAPFoundation", "COpenSSL"]
        ),
        // StoreKit 1 app receipts: PKCS#7 over OpenSSL, strict DER payload decoding.
        .target(
            name: "AppStoreReceipt",
            dependencies: ["IAPFoundation", "COpenSSL", "AppStoreJWS"]
        ),
        .target(
            name: "SubscriptionEngine",
            dependencies: ["IAPFoundation"]
        ),
        // The App Store Server API client: JWT over OpenSSL, HTTPS over libcurl, retries, pagination.
        .target(
            name: "AppStoreAPI",
            dependencies: ["IAPFoundation", "AppStoreJWS", "COpenSSL", "CCurl"]
        ),
        // Test and benchmark support: throwaway CA chains with Apple's OIDs, JWS signing.
        // Not part of the shipped binary.
        .target(
            name: "JWSForge",
            dependencies: ["IAPFoundation", "CryptoDigest", "COpenSSL"]
        ),
        .executableTarget(
            name: "jwsforge",
            dependencies: ["IAPFoundation", "JWSForge", "CommandLineKit"]
        ),
        // The one SQL store layer every backend shares: session, transaction runner, column tables,
        // schema description, SQLDialect; and the ledger's packed raw form (SHA-256 from CryptoDigest;
        // compression by libzstd, loaded on first use).
        .target(
            name: "StoreSQL",
            dependencies: ["IAPFoundation", "SubscriptionEngine", "CryptoDigest", "CZstd", "CZlib"],
            exclude: ["README.md", "FORMATS.md"]
        ),
        .target(
            name: "SQLiteStore",
            dependencies: ["IAPFoundation", "SubscriptionEngine", "StoreSQL", "CSQLite"]
        ),
        .target(
            name: "MySQLStore",
            dependencies: ["IAPFoundation", "SubscriptionEngine", "StoreSQL", "CMariaDB"]
        ),
        .target(
            name: "PostgresStore",
            dependencies: ["IAPFoundation", "SubscriptionEngine", "StoreSQL", "CPostgres"]
        ),
        // Verified payloads into the store: event mapping, stored-field limits, refused items, the
        // verified-batch pipeline, notification ingest (atomic, group commit, replay), the facts rebuild.
        .target(
            name: "IAPOperations",
            dependencies: ["IAPFoundation", "AppStoreJWS", "AppStoreReceipt", "SubscriptionEngine", "CryptoDigest"],
            exclude: ["README.md"]
        ),
        // What comes from outside as items and rows: command input framing (JWS lines, webhook bodies,
        // API answers, receipts) and `--from` batch and correction rows.
        .target(
            name: "ItemInput",
            dependencies: ["IAPFoundation", "AppStoreJWS", "AppStoreReceipt", "SubscriptionEngine"],
            exclude: ["README.md"]
        ),
        // What an app's client sends: verification (trust settings, verifiers per kind), submissions,
        // restores, receipts, and the per-item report.
        .target(
            name: "ClientSubmissions",
            dependencies: ["IAPFoundation", "AppStoreJWS", "AppStoreReceipt", "AppStoreAPI", "SubscriptionEngine", "IAPOperations"],
            exclude: ["README.md"]
        ),
        // What iapctl does with Apple's API: reconcile, notification history and sync, writes
        // (extend, consumption), the refund desk.
        .target(
            name: "AppleFlows",
            dependencies: [
                "IAPFoundation", "AppStoreJWS", "AppStoreAPI", "SubscriptionEngine", "IAPOperations", "ClientSubmissions",
            ],
            exclude: ["README.md"]
        ),
        // Masks personal data (ids, emails, free text) in what iapctl prints for support.
        .target(
            name: "PersonalData",
            dependencies: ["IAPFoundation", "SubscriptionEngine"]
        ),
        // Where the database is and how it is opened: the `--db` location, opening an existing, new or
        // read-only store, and `db init`'s plan and run (migrations, the facts rebuild) as typed results.
        .target(
            name: "StoreAccess",
            dependencies: ["SubscriptionEngine", "StoreSQL", "SQLiteStore", "MySQLStore", "PostgresStore", "IAPOperations"]
        ),
        // The command framework: command model → parser, help, completions, man pages, output
        // formats, terminal text, input reading. Knows nothing of iapctl.
        .target(
            name: "CommandLineKit",
            dependencies: ["IAPFoundation"]
        ),
        .target(
            name: "IAPCommandLine",
            dependencies: [
                "IAPFoundation", "CommandLineKit", "AppStoreJWS", "AppStoreReceipt", "AppStoreAPI", "SubscriptionEngine",
                "IAPOperations", "ItemInput", "ClientSubmissions", "AppleFlows", "PersonalData", "StoreAccess", "StoreSQL",
            ]
        ),
        // Test support: fresh stores of each backend, scratch folders, programs run beside iapctl (not linked into iapctl).
        .target(
            name: "StoreTestSupport",
            dependencies: ["SQLiteStore", "MySQLStore", "PostgresStore", "SubscriptionEngine"]
        ),
        // prctl(2)/setrlimit(2) for iapctl's start (not dumpable, no core file): a header of static
        // inline functions, nothing linked or loaded.
        .systemLibrary(
            name: "CProcess",
            path: "Sources/CProcess"
        ),
        .executableTarget(
            name: "iapctl",
            dependencies: ["IAPCommandLine", "CProcess"],
            exclude: ["link"],
            // Start-up (issue 25, BENCHMARKS.md); iapctl stays a position-independent executable (ASLR).
            // - No exported symbols: the static Swift runtime's link exports every symbol of the
            //   executable (8,300); nothing loads symbols from iapctl. `--version` 5.3 → 4.2 ms CPU.
            // - lld with packed relative relocations: the 42,000 relative relocations of iapctl's own
            //   data are an 8.7 KB bitmap instead of a 1 MB table the loader reads page by page.
            // - libstdc++ and its unwinder linked statically (link/libstdc++.so, a linker script found
            //   first for the runtime's -lstdc++): two shared libraries fewer to map and relocate.
            // - The functions and data `--version` and `verify` touch laid out together
            //   (link/startup-order.txt, made by scripts/startup-order): fewer code and .bss pages.
            // Together: `--version` 365 → ~290 page faults; `StartupTests` pins PIE and the packed relocations.
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-Xlinker", "--no-export-dynamic",
                        "-use-ld=lld",
                        "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                        "-L", Context.packageDirectory + "/Sources/iapctl/link",
                        "-Xlinker", "--symbol-ordering-file=" + Context.packageDirectory + "/Sources/iapctl/link/startup-order.txt",
                        "-Xlinker", "--no-warn-symbol-ordering",
                    ], .when(platforms: [.linux]))
            ]
        ),
        // The fuzz harness over every decoder of outside input (Fuzz/FuzzTarget.swift). `scripts/fuzz`
        // builds it with libFuzzer and AddressSanitizer; a plain build is a replay driver, so it always compiles.
        .executableTarget(
            name: "IAPFuzz",
            dependencies: [
                "IAPFoundation", "AppStoreJWS", "AppStoreReceipt", "AppStoreAPI", "SubscriptionEngine", "StoreSQL", "ItemInput",
                "CommandLineKit", "IAPCommandLine", "COpenSSL",
            ],
            path: "Fuzz",
            exclude: ["corpus", "jws.dict", "make-seeds.py"]
        ),
        .testTarget(
            name: "IAPFoundationTests",
            dependencies: ["IAPFoundation"]
        ),
        .testTarget(
            name: "AppStoreJWSTests",
            dependencies: ["AppStoreJWS", "JWSForge"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "AppStoreReceiptTests",
            dependencies: ["AppStoreReceipt", "AppStoreJWS"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "SubscriptionEngineTests",
            dependencies: ["SubscriptionEngine", "SQLiteStore", "MySQLStore", "StoreTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "AppStoreAPITests",
            dependencies: ["AppStoreAPI", "AppStoreJWS", "COpenSSL"]
        ),
        .testTarget(
            name: "JWSForgeTests",
            dependencies: ["IAPFoundation", "JWSForge"]
        ),
        // One behaviour suite run against every Store backend.
        .testTarget(
            name: "StoreContractTests",
            dependencies: [
                "SQLiteStore", "MySQLStore", "PostgresStore", "SubscriptionEngine", "StoreSQL", "JWSForge", "StoreTestSupport",
            ]
        ),
        .testTarget(
            name: "StoreSQLTests",
            dependencies: ["StoreSQL", "SubscriptionEngine"]
        ),
        .testTarget(
            name: "SQLiteStoreTests",
            dependencies: ["SQLiteStore", "SubscriptionEngine", "StoreSQL", "StoreTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "PostgresStoreTests",
            dependencies: ["PostgresStore", "SubscriptionEngine", "StoreSQL", "StoreTestSupport"]
        ),
        .testTarget(
            name: "MySQLStoreTests",
            dependencies: ["MySQLStore", "SubscriptionEngine", "StoreSQL", "StoreTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        // IAPOperations, ItemInput, ClientSubmissions, AppleFlows and PersonalData in-process on every Store backend.
        .testTarget(
            name: "IAPOperationsTests",
            dependencies: [
                "IAPOperations", "ItemInput", "ClientSubmissions", "AppleFlows", "PersonalData", "SQLiteStore", "MySQLStore", "SubscriptionEngine", "JWSForge", "AppStoreReceipt", "AppStoreAPI",
                "StoreTestSupport",
            ]
        ),
        // StoreAccess in-process (SQLite).
        .testTarget(
            name: "StoreAccessTests",
            dependencies: [
                "StoreAccess", "SQLiteStore", "MySQLStore", "PostgresStore", "StoreSQL", "SubscriptionEngine", "IAPOperations",
                "StoreTestSupport",
            ]
        ),
        .testTarget(
            name: "CommandLineKitTests",
            dependencies: ["CommandLineKit", "IAPFoundation"]
        ),
        .testTarget(
            name: "IAPCommandLineTests",
            dependencies: ["IAPCommandLine", "IAPOperations", "ItemInput", "ClientSubmissions", "AppleFlows", "CommandLineKit", "JWSForge", "AppStoreReceipt", "AppStoreAPI", "StoreTestSupport"]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["JWSForge", "AppStoreAPI", "StoreTestSupport"],
            resources: [.copy("Fixtures")]
        ),
    ]
)

// Start-up (issue 25): the Swift modules iapctl is built from instantiate generic types (a
// `[String: String]`, a `Set<String>`) through metadata accessors that receive the conformances the
// compiler already knows, not by mangled name: from a mangled name the Swift runtime checks each
// generic requirement by scanning every conformance record of the binary (~0.25 M instructions per
// distinct type and protocol, and the pages of every module's records). Every function in a section
// of its own, so link/startup-order.txt can place each one (see the iapctl target).
for target in package.targets where [.regular, .executable].contains(target.type) && target.name != "COpenSSL" {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .unsafeFlags(
                ["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors", "-Xfrontend", "-function-sections"],
                .when(platforms: [.linux]))
        ]
}
