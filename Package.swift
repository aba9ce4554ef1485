// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "iapctl",
    products: [
        .executable(name: "iapctl", targets: ["iapctl"])
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            providers: [.apt(["libssl-dev"])]
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
        // Leaf basics every module may use: JSON value/parser/writer, strict base64, timestamps and
        // the clock, trimming. Imports only FoundationEssentials.
        .target(
            name: "IAPFoundation"
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
            dependencies: ["IAPFoundation", "COpenSSL"]
        ),
        .executableTarget(
            name: "jwsforge",
            dependencies: ["IAPFoundation", "JWSForge"]
        ),
        // The SQL text both Store backends share, and the ledger's packed raw form (SHA-256 from
        // libcrypto; compression by its own LZ codec).
        .target(
            name: "StoreSQL",
            dependencies: ["SubscriptionEngine", "COpenSSL"]
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
            name: "IAPCommandLine",
            dependencies: [
                "IAPFoundation", "AppStoreJWS", "AppStoreReceipt", "AppStoreAPI", "SubscriptionEngine", "SQLiteStore", "MySQLStore",
            ]
        ),
        .executableTarget(
            name: "iapctl",
            dependencies: ["IAPCommandLine"]
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
            dependencies: ["SubscriptionEngine", "SQLiteStore", "MySQLStore"],
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
            dependencies: ["SQLiteStore", "MySQLStore", "SubscriptionEngine", "StoreSQL", "JWSForge"]
        ),
        .testTarget(
            name: "StoreSQLTests",
            dependencies: ["StoreSQL"]
        ),
        .testTarget(
            name: "SQLiteStoreTests",
            dependencies: ["SQLiteStore", "SubscriptionEngine"]
        ),
        .testTarget(
            name: "MySQLStoreTests",
            dependencies: ["MySQLStore", "SubscriptionEngine"]
        ),
        .testTarget(
            name: "IAPCommandLineTests",
            dependencies: ["IAPCommandLine", "JWSForge", "AppStoreReceipt"]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["JWSForge", "AppStoreAPI"],
            resources: [.copy("Fixtures")]
        ),
    ]
)
