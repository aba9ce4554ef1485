/// One positional argument (`KEY`, `[FILE]`, `[COMMAND…]`).
public struct ArgumentSpec: Sendable {
    /// The placeholder shown in usage (`key`, `file`).
    public var name: String
    /// One or two sentences.
    public var help: String
    /// Whether it may be left out.
    public var isOptional: Bool
    /// Whether it takes all remaining positional words.
    public var isRepeating: Bool
    /// The only accepted values, if any.
    public var allowedValues: [String]?
    /// What shells complete for it.
    public var completion: CompletionKind
    /// The type the text converts to when the line is parsed (`Argument<Value>` sets it); nil: the text.
    public var conversion: ValueConversion?

    /// A positional argument; see the properties for the meaning of each parameter.
    public init(
        _ name: String,
        help: String,
        isOptional: Bool = false,
        isRepeating: Bool = false,
        allowedValues: [String]? = nil,
        completion: CompletionKind? = nil
    ) {
        self.name = name
        self.help = help
        self.isOptional = isOptional
        self.isRepeating = isRepeating
        self.allowedValues = allowedValues
        self.completion = completion ?? (allowedValues.map { .values($0) } ?? .none)
    }

    /// `<key>`, `[<file>]` or `[<command>...]` as shown in usage lines.
    public var usageText: String {
        var text = "<\(name)>"
        if isRepeating { text += "..." }
        return isOptional ? "[\(text)]" : text
    }
}
