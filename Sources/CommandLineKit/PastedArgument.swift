/// A command-line argument that is data pasted where a file name goes.
enum PastedArgument {
    /// A short description (`eyJhbGciOi…, 15,083 bytes`) when `argument` looks like a JWS (it
    /// starts with `eyJ`, the base64url of `{"`, holds a dot and no slash), else nil.
    static func looksLikeJWS(_ argument: String) -> String? {
        guard argument.hasPrefix("eyJ"), argument.utf8.count > 64, argument.contains("."), !argument.contains("/") else {
            return nil
        }
        return String(argument.prefix(12)) + "…, " + grouped(argument.utf8.count) + " bytes"
    }

    /// `15083` as `15,083`.
    static func grouped(_ number: Int) -> String {
        var digits = String(number)
        var result = ""
        while digits.count > 3 {
            result = "," + digits.suffix(3) + result
            digits.removeLast(3)
        }
        return digits + result
    }
}
