// jwsforge: make throwaway Apple-shaped CA chains and sign App Store JWS with them (tests and benchmarks only).
import Foundation
import IAPFoundation
import JWSForge

let usage = """
    usage: jwsforge <command> [options]

    Test/benchmark tool for iapctl. Everything it signs is signed by a throwaway CA that is NOT Apple.

    commands:
      ca --out DIR [--name-prefix P] [--leaf-not-before MS] [--leaf-not-after MS]
         [--leaf-curve P-256|P-384] [--no-leaf-oid] [--no-intermediate-oid] [--force]
          make a chain and write DIR/root.pem, intermediate.pem, leaf.pem, leaf.key
      sign --ca DIR [--kid K] [--alg A]
          read a JSON payload on stdin (trailing newline dropped), print its compact JWS
      notification --ca DIR --type T [--subtype S] --uuid U --signed-date MS
         [--transaction-json FILE] [--renewal-json FILE] --bundle-id B --environment E
         [--app-apple-id N] [--bundle-version V] [--status N|none] [--webhook]
          sign the nested payloads (files are signed as is) and the notification; print its JWS
          (--webhook: print {"signedPayload":"…"} instead)
      series --ca DIR --orders N --renewals R --bundle-id B --environment E --tokens FILE
         [--product P] [--start MS] [--app-apple-id N] [--seed N] [--webhook]
          print N SUBSCRIBED/INITIAL_BUY notifications (appAccountToken = line i of FILE), then R rounds
          of N DID_RENEW (expiry +30 days each round); one JWS per line, streamed
      help
          show this text

    Dates are milliseconds since the Unix epoch. Exit status: 0 ok, 1 failure, 64 usage error.
    """

/// A usage error: printed with the usage text, exit 64.
struct UsageError: Error {
    let message: String
}

/// Parsed `--name value` options and `--flag` switches of one command.
struct Options {
    var values: [String: String] = [:]
    var flags: Set<String> = []

    init(_ args: ArraySlice<String>, valued: Set<String>, switches: Set<String>) throws {
        var i = args.startIndex
        while i < args.endIndex {
            let arg = args[i]
            if switches.contains(arg) {
                flags.insert(arg)
            } else if valued.contains(arg) {
                guard i + 1 < args.endIndex else { throw UsageError(message: "\(arg) needs a value") }
                values[arg] = args[i + 1]
                i += 1
            } else {
                throw UsageError(message: "unknown option '\(arg)'")
            }
            i += 1
        }
    }

    func required(_ name: String) throws -> String {
        guard let value = values[name] else { throw UsageError(message: "missing \(name)") }
        return value
    }

    func int(_ name: String) throws -> Int64? {
        guard let text = values[name] else { return nil }
        guard let value = Int64(text) else { throw UsageError(message: "\(name) must be an integer, got '\(text)'") }
        return value
    }

    func requiredInt(_ name: String) throws -> Int64 {
        guard let value = try int(name) else { throw UsageError(message: "missing \(name)") }
        return value
    }
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

func runCA(_ args: ArraySlice<String>) throws {
    let o = try Options(
        args, valued: ["--out", "--name-prefix", "--leaf-not-before", "--leaf-not-after", "--leaf-curve"],
        switches: ["--no-leaf-oid", "--no-intermediate-oid", "--force"])
    let out = try o.required("--out")
    var options = PKIOptions()
    options.leafOID = !o.flags.contains("--no-leaf-oid")
    options.intermediateOID = !o.flags.contains("--no-intermediate-oid")
    if let prefix = o.values["--name-prefix"] { options.namePrefix = prefix }
    if let from = try o.int("--leaf-not-before") { options.leafNotBefore = from }
    if let to = try o.int("--leaf-not-after") { options.leafNotAfter = to }
    if let curve = o.values["--leaf-curve"] {
        guard let parsed = Curve(rawValue: curve.uppercased()) else {
            throw UsageError(message: "--leaf-curve must be P-256 or P-384")
        }
        options.leafCurve = parsed
    }
    let keyPath = (out as NSString).appendingPathComponent(TestPKI.FileName.leafKey)
    if FileManager.default.fileExists(atPath: keyPath), !o.flags.contains("--force") {
        throw ForgeError("\(keyPath) exists; pass --force to replace the chain")
    }
    try TestPKI.make(options).save(to: out)
    FileHandle.standardError.write(Data("jwsforge: wrote chain to \(out)\n".utf8))
}

func runSign(_ args: ArraySlice<String>) throws {
    let o = try Options(args, valued: ["--ca", "--kid", "--alg"], switches: [])
    let pki = try TestPKI.load(directory: try o.required("--ca"))
    let payload = String(try readFile("-").trimmed(.whitespace, leading: false))
    var header: [String: Any] = [:]
    if let kid = o.values["--kid"] { header["kid"] = kid }
    if let alg = o.values["--alg"] { header["alg"] = alg }
    print(try pki.sign(payload: payload, header: header.isEmpty ? nil : header))
}

func runNotification(_ args: ArraySlice<String>) throws {
    let o = try Options(
        args,
        valued: [
            "--ca", "--type", "--subtype", "--uuid", "--signed-date", "--transaction-json", "--renewal-json",
            "--bundle-id", "--environment", "--app-apple-id", "--bundle-version", "--status",
        ],
        switches: ["--webhook"])
    let pki = try TestPKI.load(directory: try o.required("--ca"))
    var builder = PayloadBuilder(
        pki: pki, bundleId: try o.required("--bundle-id"), environment: try o.required("--environment"))
    builder.appAppleId = try o.int("--app-apple-id") ?? builder.appAppleId
    if let version = o.values["--bundle-version"] { builder.bundleVersion = version }
    let type = try o.required("--type")
    let uuid = try o.required("--uuid")
    let signedDate = try o.requiredInt("--signed-date")
    var status: Int64?? = .none
    if let text = o.values["--status"] {
        if text == "none" {
            status = .some(nil)
        } else if let value = Int64(text) {
            status = .some(value)
        } else {
            throw UsageError(message: "--status must be an integer or 'none'")
        }
    }
    let jws: String
    if type == "TEST", o.values["--transaction-json"] == nil, o.values["--renewal-json"] == nil {
        jws = try builder.testNotification(uuid: uuid, signedDate: signedDate)
    } else {
        jws = try builder.notification(
            type: type, subtype: o.values["--subtype"], uuid: uuid, signedDate: signedDate,
            transactionJSON: try o.values["--transaction-json"].map { String(try readFile($0).trimmed(.whitespace, leading: false)) },
            renewalJSON: try o.values["--renewal-json"].map { String(try readFile($0).trimmed(.whitespace, leading: false)) },
            status: status)
    }
    print(o.flags.contains("--webhook") ? webhookBody(jws) : jws)
}

func runSeries(_ args: ArraySlice<String>) throws {
    let o = try Options(
        args,
        valued: [
            "--ca", "--orders", "--renewals", "--bundle-id", "--environment", "--tokens", "--product", "--start",
            "--app-apple-id", "--seed",
        ],
        switches: ["--webhook"])
    let orders = try o.requiredInt("--orders")
    let renewals = try o.requiredInt("--renewals")
    guard orders >= 0, renewals >= 0 else { throw UsageError(message: "--orders and --renewals must be >= 0") }
    let tokens = try readFile(try o.required("--tokens")).split(whereSeparator: \.isNewline)
        .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    guard tokens.count >= orders else {
        throw UsageError(message: "--tokens has \(tokens.count) lines, --orders needs \(orders)")
    }
    let pki = try TestPKI.load(directory: try o.required("--ca"))
    var builder = PayloadBuilder(
        pki: pki, bundleId: try o.required("--bundle-id"), environment: try o.required("--environment"))
    builder.appAppleId = try o.int("--app-apple-id") ?? builder.appAppleId
    var series = SubscriptionSeries(orders: Int(orders), renewals: Int(renewals), tokens: tokens)
    if let product = o.values["--product"] { series.productId = product }
    if let start = try o.int("--start") { series.start = start }
    if let seed = try o.int("--seed") {
        guard let value = UInt32(exactly: seed) else { throw UsageError(message: "--seed must fit in 32 bits") }
        series.seed = value
    }
    let webhook = o.flags.contains("--webhook")
    let output = Output()
    try series.generate(with: builder) { output.line(webhook ? webhookBody($0) : $0) }
    output.flush()
}

func main() -> Int32 {
    let args = CommandLine.arguments.dropFirst()
    guard let command = args.first else {
        FileHandle.standardError.write(Data((usage + "\n").utf8))
        return 64
    }
    let rest = args.dropFirst()
    do {
        switch command {
        case "ca": try runCA(rest)
        case "sign": try runSign(rest)
        case "notification": try runNotification(rest)
        case "series": try runSeries(rest)
        case "help", "--help", "-h":
            print(usage)
        default: throw UsageError(message: "unknown command '\(command)'")
        }
        return 0
    } catch let error as UsageError {
        let text = "error: \(error.message)\nusage: jwsforge ca|sign|notification|series [options]\n"
        FileHandle.standardError.write(Data((text + "See 'jwsforge help'.\n").utf8))
        return 64
    } catch {
        FileHandle.standardError.write(Data("jwsforge: error: \(error)\n".utf8))
        return 1
    }
}

exit(main())
