import IAPFoundation

/// A type an option's or argument's text converts to, once, when the command line is parsed
/// (`Option<Int?>`, `Option<ContractStatus?>`, `Argument<String>`); handlers read the typed value.
///
/// A value that does not convert is a usage error naming the option (exit 64), or a configuration
/// error naming the environment variable or config key that gave it (exit 78).
public protocol OptionValue: OptionReadable where Parsed == Self {
    /// The value `text` stands for (already checked against the spec's allowed values and
    /// validation, in canonical spelling), or why it is none.
    init(optionText text: String) throws(OptionValueProblem)
}

/// Why a text is not a value of its option's type ("'x' is not an integer").
public struct OptionValueProblem: Error, Sendable, Equatable {
    /// What is wrong, quoting the value.
    public var message: String
    /// What to type instead.
    public var hint: String?
    /// How the message names the option or argument.
    public var naming: Naming

    /// Where the option's or argument's name goes in the message.
    public enum Naming: Sendable, Equatable {
        /// As a label: `--limit: 'x' is not a positive integer`.
        case label
        /// As its subject: `--since 'x' is not a time`.
        case subject
        /// Not at all: the message says what the value is (`audit id 'x' is not a number`).
        case none
    }

    /// A problem; see the properties for the meaning of each parameter.
    public init(_ message: String, hint: String? = nil, naming: Naming = .label) {
        self.message = message
        self.hint = hint
        self.naming = naming
    }

    /// The message with the option's (or argument's) display name in front, as `naming` says.
    func message(naming name: String) -> String {
        switch naming {
        case .label: return name + ": " + message
        case .subject: return name + " " + message
        case .none: return message
        }
    }
}

/// How an option's values are read: one value (`Int`, required or defaulted), maybe one
/// (`Int?`), or every value of a repeatable option (`[Int]`).
public protocol OptionReadable: Sendable {
    /// The type each value converts to.
    associatedtype Parsed: OptionValue
    /// `.value` or `.repeatable`.
    static var optionKind: OptionSpec.Kind { get }
    /// Whether the option may be left out (an optional or a repeatable one).
    static var mayBeAbsent: Bool { get }
    /// The value read from the values given (last wins), nil when there is none and there must be one.
    static func reading(_ values: [Parsed]) -> Self?
}

extension OptionValue {
    public static var optionKind: OptionSpec.Kind { .value }
    public static var mayBeAbsent: Bool { false }
    public static func reading(_ values: [Self]) -> Self? { values.last }
}

extension Optional: OptionReadable where Wrapped: OptionValue {
    public typealias Parsed = Wrapped
    public static var optionKind: OptionSpec.Kind { .value }
    public static var mayBeAbsent: Bool { true }
    public static func reading(_ values: [Wrapped]) -> Self? { .some(values.last) }
}

extension Array: OptionReadable where Element: OptionValue {
    public typealias Parsed = Element
    public static var optionKind: OptionSpec.Kind { .repeatable }
    public static var mayBeAbsent: Bool { true }
    public static func reading(_ values: [Element]) -> Self? { values }
}

extension String: OptionValue {
    public init(optionText text: String) { self = text }
}

extension Int: OptionValue {
    public init(optionText text: String) throws(OptionValueProblem) {
        guard let number = Int(text) else { throw OptionValueProblem("'\(text)' is not an integer") }
        self = number
    }
}

extension Int64: OptionValue {
    public init(optionText text: String) throws(OptionValueProblem) {
        guard let number = Int64(text) else { throw OptionValueProblem("'\(text)' is not an integer") }
        self = number
    }
}

/// An enumeration whose raw values are an option's `allowedValues` (`OptionSpec.choices`).
extension OptionValue where Self: RawRepresentable, RawValue == String {
    public init(optionText text: String) throws(OptionValueProblem) {
        guard let value = Self(rawValue: text) else { throw OptionValueProblem("'\(text)' is not a \(Self.self)") }
        self = value
    }
}

/// A moment in the one grammar of `Timestamp.parse`: ISO-8601, milliseconds since 1970, `now`, or
/// a span back from now (`90m`, `36h`, `7d`). The text is read once, when the line is parsed; a
/// form that counts back from now is resolved against the clock reading the handler uses for the
/// rest of its work (`at(_:)`), so one run has one "now".
public struct PointInTime: OptionValue, Equatable {
    /// Milliseconds since 1970, or (when `followsNow`) milliseconds to add to now (≤ 0).
    let offset: Int64
    /// Whether the text counts back from now (`now`, `36h`) rather than naming a moment.
    public let followsNow: Bool

    /// A fixed moment in milliseconds since 1970.
    public init(milliseconds: Int64) {
        offset = milliseconds
        followsNow = false
    }

    public init(optionText text: String) throws(OptionValueProblem) {
        // The grammar is `now - span` or a fixed moment: read at two clocks, the two differ only for the former.
        guard let atZero = Timestamp.parse(text, now: 0), let atOne = Timestamp.parse(text, now: 1) else {
            throw OptionValueProblem(
                "'\(text)' is not a time", hint: "use " + Timestamp.inputForms, naming: .subject)
        }
        offset = atZero
        followsNow = atOne != atZero
    }

    /// The moment in milliseconds since 1970, with `now` the run's clock reading.
    public func at(_ now: Int64) -> Int64 { followsNow ? now + offset : offset }
}

/// The conversion an option or argument spec applies to its checked text (type-erased, so specs
/// of every type sit in one list); two specs convert alike when they convert to the same type.
public struct ValueConversion: Sendable, Equatable {
    /// The type values convert to. (Not its name: `String(reflecting:)` of each option's type was
    /// 13.8 M of the 27.8 M instructions of `iapctl --version`, the runtime's conformance look-ups.)
    public let valueType: ObjectIdentifier
    let convert: @Sendable (String) throws(OptionValueProblem) -> any Sendable

    /// The conversion to `type`.
    public init<Value: OptionValue>(_ type: Value.Type) {
        valueType = ObjectIdentifier(type)
        convert = { text throws(OptionValueProblem) in try Value(optionText: text) }
    }

    public static func == (lhs: ValueConversion, rhs: ValueConversion) -> Bool { lhs.valueType == rhs.valueType }
}
