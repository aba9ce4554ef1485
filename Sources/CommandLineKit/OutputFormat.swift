/// The shape of command output on stdout (`-o, --output`).
public enum OutputFormat: String, Sendable, CaseIterable {
    /// Aligned columns for people (the default).
    case table
    /// One JSON document.
    case json
    /// One JSON object per line, one per item.
    case ndjson
    /// RFC 4180 CSV with a header line.
    case csv
}
