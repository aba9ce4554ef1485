// jwsforge: make throwaway Apple-shaped CA chains and sign App Store JWS with them (tests and benchmarks only).
import CommandLineKit
import Foundation
import IAPFoundation
import JWSForge

/// The options the commands share (read by these same values in the handlers).
enum Opt {
    static let ca = OptionSpec("ca", valueName: "dir", help: "The chain folder `jwsforge ca` wrote.", completion: .directory)
    static let out = OptionSpec(
        "out", valueName: "dir", help: "The folder to write root.pem, intermediate.pem, leaf.pem, leaf.key into.",
        isRequired: true, completion: .directory)
    static let namePrefix = OptionSpec("name-prefix", valueName: "p", help: "The certificates' common-name prefix.")
    static let leafNotBefore = OptionSpec("leaf-not-before", valueName: "ms", help: "The leaf's notBefore.")
    static let leafNotAfter = OptionSpec("leaf-not-after", valueName: "ms", help: "The leaf's notAfter.")
    static let leafCurve = OptionSpec(
        "leaf-curve", valueName: "curve", help: "The leaf key's curve.", allowedValues: OptionSpec.choices(Curve.self))
    static let noLeafOID = OptionSpec.flag("no-leaf-oid", help: "Leave Apple's receipt-signing OID off the leaf.")
    static let noIntermediateOID = OptionSpec.flag(
        "no-intermediate-oid", help: "Leave Apple's WWDR OID off the intermediate.")
    static let force = OptionSpec.flag("force", help: "Replace an existing chain.")
    static let kid = OptionSpec("kid", valueName: "k", help: "A `kid` header.")
    static let alg = OptionSpec("alg", valueName: "a", help: "The `alg` header (default ES256).")
    static let type = OptionSpec("type", valueName: "t", help: "The notificationType (TEST: a test notification).")
    static let subtype = OptionSpec("subtype", valueName: "s", help: "The subtype.")
    static let uuid = OptionSpec("uuid", valueName: "u", help: "The notificationUUID.")
    static let signedDate = OptionSpec("signed-date", valueName: "ms", help: "The notification's signedDate.")
    static let transactionJSON = OptionSpec(
        "transaction-json", valueName: "file", help: "A transaction payload to sign and nest (signed as is).",
        completion: .file)
    static let renewalJSON = OptionSpec(
        "renewal-json", valueName: "file", help: "A renewal info payload to sign and nest (signed as is).",
        completion: .file)
    static let bundleId = OptionSpec("bundle-id", valueName: "b", help: "The bundleId.")
    static let environment = OptionSpec("environment", valueName: "e", help: "The environment.")
    static let appAppleId = OptionSpec("app-apple-id", valueName: "n", help: "The appAppleId.")
    static let bundleVersion = OptionSpec("bundle-version", valueName: "v", help: "The bundleVersion.")
    static let status = OptionSpec("status", valueName: "n|none", help: "The status field (none: left out).")
    static let webhook = OptionSpec.flag("webhook", help: "Print {\"signedPayload\":\"…\"} instead of the JWS.")
    static let orders = OptionSpec("orders", valueName: "n", help: "How many initial purchases.")
    static let renewals = OptionSpec("renewals", valueName: "r", help: "How many rounds of renewals.")
    static let tokens = OptionSpec(
        "tokens", valueName: "file", help: "appAccountTokens, one a line (line i: order i).", completion: .file)
    static let product = OptionSpec("product", valueName: "p", help: "The productId.")
    static let start = OptionSpec("start", valueName: "ms", help: "The first purchase date.")
    static let seed = OptionSpec("seed", valueName: "n", help: "The random seed (32 bits).")
}

let root = CommandSpec(
    name: "jwsforge",
    abstract: "Test/benchmark tool for iapctl: throwaway Apple-shaped CA chains and App Store JWS signed by them.",
    discussion: """
        Everything it signs is signed by a throwaway CA that is NOT Apple. Dates are milliseconds since \
        the Unix epoch.
        """,
    examples: [CommandExample("jwsforge ca --out /tmp/ca", "Make a chain.")],
    subcommands: [
        CommandSpec(
            name: "ca", abstract: "Make a chain and write DIR/root.pem, intermediate.pem, leaf.pem, leaf.key.",
            options: [
                Opt.out, Opt.namePrefix, Opt.leafNotBefore, Opt.leafNotAfter, Opt.leafCurve, Opt.noLeafOID,
                Opt.noIntermediateOID, Opt.force,
            ],
            handler: runCA),
        CommandSpec(
            name: "sign",
            abstract: "Read a JSON payload on stdin (trailing newline dropped), print its compact JWS.",
            options: [Opt.ca.required, Opt.kid, Opt.alg], handler: runSign),
        CommandSpec(
            name: "notification",
            abstract: "Sign the nested payloads and the notification; print its JWS.",
            options: [
                Opt.ca.required, Opt.type.required, Opt.subtype, Opt.uuid.required, Opt.signedDate.required,
                Opt.transactionJSON, Opt.renewalJSON, Opt.bundleId.required, Opt.environment.required, Opt.appAppleId,
                Opt.bundleVersion, Opt.status, Opt.webhook,
            ],
            handler: runNotification),
        CommandSpec(
            name: "series",
            abstract: "Print N SUBSCRIBED/INITIAL_BUY notifications (appAccountToken = line i of --tokens), then R "
                + "rounds of N DID_RENEW (expiry +30 days each round); one JWS per line, streamed.",
            options: [
                Opt.ca.required, Opt.orders.required, Opt.renewals.required, Opt.bundleId.required,
                Opt.environment.required, Opt.tokens.required, Opt.product, Opt.start, Opt.appAppleId, Opt.seed,
                Opt.webhook,
            ],
            handler: runSeries),
        CommandSpec(
            name: "help", abstract: "Show help for a command.",
            arguments: [ArgumentSpec("command", help: "The command.", isOptional: true, isRepeating: true)],
            handler: HelpCommand.run, inheritsOptions: false),
    ],
    program: ProgramInfo(
        exitStatuses: [.init(.success, "ok"), .init(.failure, "failure"), .init(.usage, "usage error")])
).mapHandlers { handler in
    { invocation in
        do {
            return try handler(invocation)
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError(.failure, "\(error)")
        }
    }
}

extension OptionSpec {
    /// This option, required.
    var required: OptionSpec {
        var copy = self
        copy.isRequired = true
        return copy
    }
}

extension Invocation {
    /// The value of an integer option, nil if not given.
    func int(_ option: OptionSpec) throws(CLIError) -> Int64? {
        guard let text = value(option) else { return nil }
        guard let value = Int64(text) else { throw CLIError.usage("--\(option.long) must be an integer, got '\(text)'") }
        return value
    }

    /// The value of a required option (the parser has checked that it is there).
    func required(_ option: OptionSpec) -> String { value(option) ?? "" }
}

/// Buffered stdout for large streams.
final class Output {
    private var buffer: [UInt8] = []

    init() {
        buffer.reserveCapacity(1 << 20)
    }

    func line(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 20 { flush() }
    }

    func flush() {
        var offset = 0
        while offset < buffer.count {
            let written = buffer[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            if written <= 0 {
                if written < 0, errno == EINTR { continue }
                FileHandle.standardError.write(Data("jwsforge: cannot write to stdout\n".utf8))
                exit(1)
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

func readFile(_ path: String) throws -> String {
    if path == "-" {
        return String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    }
    guard let data = FileManager.default.contents(atPath: path) else { throw ForgeError("cannot read \(path)") }
    return String(decoding: data, as: UTF8.self)
}

func webhookBody(_ jws: String) -> String {
    #"{"signedPayload":""# + jws + #""}"#
}

func runCA(_ invocation: Invocation) throws -> ExitCode {
    let out = invocation.required(Opt.out)
    var options = PKIOptions()
    options.leafOID = !invocation.flag(Opt.noLeafOID)
    options.intermediateOID = !invocation.flag(Opt.noIntermediateOID)
    if let prefix = invocation.value(Opt.namePrefix) { options.namePrefix = prefix }
    if let from = try invocation.int(Opt.leafNotBefore) { options.leafNotBefore = from }
    if let to = try invocation.int(Opt.leafNotAfter) { options.leafNotAfter = to }
    if let curve = try invocation.value(Opt.leafCurve, as: Curve.self) { options.leafCurve = curve }
    let keyPath = (out as NSString).appendingPathComponent(TestPKI.FileName.leafKey)
    if FileManager.default.fileExists(atPath: keyPath), !invocation.flag(Opt.force) {
        throw ForgeError("\(keyPath) exists; pass --force to replace the chain")
    }
    try TestPKI.make(options).save(to: out)
    invocation.stderr.writeLine("jwsforge: wrote chain to \(out)")
    return .success
}

func runSign(_ invocation: Invocation) throws -> ExitCode {
    let pki = try TestPKI.load(directory: invocation.required(Opt.ca))
    let payload = String(try readFile("-").trimmed(.whitespace, leading: false))
    var header: [String: Any] = [:]
    if let kid = invocation.value(Opt.kid) { header["kid"] = kid }
    if let alg = invocation.value(Opt.alg) { header["alg"] = alg }
    invocation.stdout.writeLine(try pki.sign(payload: payload, header: header.isEmpty ? nil : header))
    return .success
}

func runNotification(_ invocation: Invocation) throws -> ExitCode {
    let pki = try TestPKI.load(directory: invocation.required(Opt.ca))
    var builder = PayloadBuilder(
        pki: pki, bundleId: invocation.required(Opt.bundleId), environment: invocation.required(Opt.environment))
    builder.appAppleId = try invocation.int(Opt.appAppleId) ?? builder.appAppleId
    if let version = invocation.value(Opt.bundleVersion) { builder.bundleVersion = version }
    let type = invocation.required(Opt.type)
    let uuid = invocation.required(Opt.uuid)
    let signedDate = try invocation.int(Opt.signedDate) ?? 0
    var status: Int64?? = .none
    if let text = invocation.value(Opt.status) {
        if text == "none" {
            status = .some(nil)
        } else if let value = Int64(text) {
            status = .some(value)
        } else {
            throw CLIError.usage("--status must be an integer or 'none'")
        }
    }
    let transactionFile = invocation.value(Opt.transactionJSON)
    let renewalFile = invocation.value(Opt.renewalJSON)
    let jws: String
    if type == "TEST", transactionFile == nil, renewalFile == nil {
        jws = try builder.testNotification(uuid: uuid, signedDate: signedDate)
    } else {
        jws = try builder.notification(
            type: type, subtype: invocation.value(Opt.subtype), uuid: uuid, signedDate: signedDate,
            transactionJSON: try transactionFile.map { String(try readFile($0).trimmed(.whitespace, leading: false)) },
            renewalJSON: try renewalFile.map { String(try readFile($0).trimmed(.whitespace, leading: false)) }, status: status)
    }
    invocation.stdout.writeLine(invocation.flag(Opt.webhook) ? webhookBody(jws) : jws)
    return .success
}

func runSeries(_ invocation: Invocation) throws -> ExitCode {
    let orders = try invocation.int(Opt.orders) ?? 0
    let renewals = try invocation.int(Opt.renewals) ?? 0
    guard orders >= 0, renewals >= 0 else { throw CLIError.usage("--orders and --renewals must be >= 0") }
    let tokens = try readFile(invocation.required(Opt.tokens)).split(whereSeparator: \.isNewline)
        .map { String($0.trimmed(.spacesAndTabs)) }.filter { !$0.isEmpty }
    guard tokens.count >= orders else {
        throw CLIError.usage("--tokens has \(tokens.count) lines, --orders needs \(orders)")
    }
    let pki = try TestPKI.load(directory: invocation.required(Opt.ca))
    var builder = PayloadBuilder(
        pki: pki, bundleId: invocation.required(Opt.bundleId), environment: invocation.required(Opt.environment))
    builder.appAppleId = try invocation.int(Opt.appAppleId) ?? builder.appAppleId
    var series = SubscriptionSeries(orders: Int(orders), renewals: Int(renewals), tokens: tokens)
    if let product = invocation.value(Opt.product) { series.productId = product }
    if let start = try invocation.int(Opt.start) { series.start = start }
    if let seed = try invocation.int(Opt.seed) {
        guard let value = UInt32(exactly: seed) else { throw CLIError.usage("--seed must fit in 32 bits") }
        series.seed = value
    }
    let webhook = invocation.flag(Opt.webhook)
    let output = Output()
    try series.generate(with: builder) { output.line(webhook ? webhookBody($0) : $0) }
    output.flush()
    return .success
}

exitProcess(with: runCommandLine(root: root, arguments: Array(CommandLine.arguments.dropFirst())))
