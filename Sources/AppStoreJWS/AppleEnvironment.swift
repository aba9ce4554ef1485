/// Apple's `environment` values (a receipt's type maps onto them), typed; a value Apple adds
/// later stays representable as ``unknown(_:)`` and is shown as sent.
public enum AppleEnvironment: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    case production
    case sandbox
    /// Xcode StoreKit testing: unsigned data, accepted only when asked for.
    case xcode
    /// Local StoreKit testing: unsigned data, accepted only when asked for.
    case localTesting
    case unknown(String)

    /// The known values, in the order `--environment` lists them.
    public static let known: [AppleEnvironment] = [.production, .sandbox, .xcode, .localTesting]

    public init(rawValue: String) {
        self = Self.known.first(where: { $0.rawValue == rawValue }) ?? .unknown(rawValue)
    }

    /// As Apple writes it: `Production`, `Sandbox`, `Xcode`, `LocalTesting`.
    public var rawValue: String {
        switch self {
        case .production: "Production"
        case .sandbox: "Sandbox"
        case .xcode: "Xcode"
        case .localTesting: "LocalTesting"
        case .unknown(let raw): raw
        }
    }

    public var description: String { rawValue }

    /// Xcode and LocalTesting data carry no Apple signature.
    public var isUnsignedTesting: Bool { self == .xcode || self == .localTesting }
}
