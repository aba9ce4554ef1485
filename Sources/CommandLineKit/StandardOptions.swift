/// The options the framework itself acts on. A program lists those it offers (usually inherited
/// from the root, in "Global options"); the framework reads them by these same values.
public enum StandardOptions {
    /// `-o, --output FORMAT`: how results are printed (`Invocation.output`).
    public static let output = OptionSpec(
        "output", short: "o", valueName: "format",
        help: "How to print results: aligned table, one JSON document, one JSON object per line, or CSV.",
        allowedValues: OptionSpec.choices(OutputFormat.self), configKey: "output",
        defaultValue: OutputFormat.table.rawValue, isInherited: true, section: "Global options")
    /// `-q, --quiet`: notes and warnings are not printed (`Invocation.quiet`).
    public static let quiet = OptionSpec.flag(
        "quiet", short: "q", help: "Print less on stderr: only errors.", isInherited: true, section: "Global options")
    /// `-v, --verbose`: diagnostics are printed, and where each setting came from (`Invocation.verbose`).
    public static let verbose = OptionSpec.flag(
        "verbose", short: "v", help: "Print more on stderr: each step and where settings came from.",
        isInherited: true, section: "Global options")
    /// `--no-color` (`Invocation.colorEnabled`).
    public static let noColor = OptionSpec.flag(
        "no-color",
        help: "Never colour the output (colour is used only on a terminal, without NO_COLOR and not with "
            + "TERM=dumb).",
        configKey: "no-color", isInherited: true, section: "Global options")
    /// `--wide`: tables are never cut to a terminal's width (`Invocation.tableWidth`).
    public static let wide = OptionSpec.flag(
        "wide",
        help: "Never cut table cells. Tables are cut (with …) only to fit a terminal's width; in a file or a "
            + "pipe they are always whole.",
        configKey: "wide", isInherited: true, section: "Global options")
    /// `--csv-raw`: CSV cells are not protected against spreadsheet formulas (`Invocation.outputStyle`).
    public static let csvRaw = OptionSpec.flag(
        "csv-raw",
        help: "With -o csv, write cells as they are. By default a text cell starting with =, +, -, @, tab or CR "
            + "gets a leading ' so a spreadsheet does not run it as a formula (numbers are never changed).",
        configKey: "csv-raw", isInherited: true, section: "Global options")
    /// `--version` on the root: prints the program's name and `ProgramInfo.version`.
    public static let version = OptionSpec.flag("version", help: "Print the version and exit.")

    /// `--config FILE`: a JSON file of settings keyed by `OptionSpec.configKey` (`Settings`).
    public static func config(help: String, environmentVariable: String? = nil) -> OptionSpec {
        OptionSpec(
            configLong, valueName: "file", help: help, environmentVariable: environmentVariable, isInherited: true,
            section: "Global options", completion: .file)
    }

    /// The long name `config(help:environmentVariable:)` gives its option.
    static let configLong = "config"
}
