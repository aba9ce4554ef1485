/// Apple's `environment` values (a receipt's type maps onto them), typed; a value Apple adds
/// later stays representable as `.unknown` and is shown as sent.
public typealias AppleEnvironment = AppleValue<EnvironmentName>

/// The environments Apple documents, in the order `--environment` lists them.
public enum EnvironmentName: String, CaseIterable, Sendable {
    case production = "Production"
    case sandbox = "Sandbox"
    /// Xcode StoreKit testing: unsigned data, accepted only when asked for.
    case xcode = "Xcode"
    /// Local StoreKit testing: unsigned data, accepted only when asked for.
    case localTesting = "LocalTesting"

    /// Xcode and LocalTesting data carry no Apple signature.
    public var isUnsignedTesting: Bool { self == .xcode || self == .localTesting }
}

extension AppleValue where Known == EnvironmentName {
    /// Xcode and LocalTesting data carry no Apple signature.
    public var isUnsignedTesting: Bool {
        if case .known(let name) = self { return name.isUnsignedTesting }
        return false
    }
}
