/// The audit trail's before/after JSON of orders and contracts, byte for byte what `JSONEncoder`
/// with `.sortedKeys` writes for them (keys in sorted order, nil members left out, `/` written as
/// `\/`, control characters escaped), without its generic machinery: the encoder was about half
/// of the engine's time per notification.
enum EngineAuditJSON {
    /// An order row as sorted-keys JSON.
    static func encode(_ o: Order) -> String {
        var w = Writer()
        w.member("createdAt", o.createdAt)
        w.member("currency", o.currency)
        w.member("environment", o.environment)
        w.member("expiresDate", o.expiresDate)
        w.member("id", o.id)
        w.member("no", o.no)
        w.member("originNo", o.originNo)
        w.member("price", o.price)
        w.member("productId", o.productId)
        w.member("purchaseDate", o.purchaseDate)
        w.member("status", o.status.rawValue)
        w.member("tradeNo", o.tradeNo)
        w.member("updatedAt", o.updatedAt)
        w.member("userId", o.userId)
        return w.finish()
    }

    /// A contract row as sorted-keys JSON.
    static func encode(_ c: Contract) -> String {
        var w = Writer()
        w.member("autoRenew", c.autoRenew)
        w.member("contractId", c.contractId)
        w.member("createdAt", c.createdAt)
        w.member("environment", c.environment)
        w.member("expiresDate", c.expiresDate)
        w.member("id", c.id)
        w.member("lastEventDate", c.lastEventDate)
        w.member("nextProductId", c.nextProductId)
        w.member("productId", c.productId)
        w.member("status", c.status.rawValue)
        w.member("updatedAt", c.updatedAt)
        w.member("userId", c.userId)
        return w.finish()
    }

    /// Appends members to a UTF-8 buffer; the caller passes keys in sorted order.
    struct Writer {
        private var bytes: [UInt8] = [UInt8(ascii: "{")]
        private var first = true

        init() { bytes.reserveCapacity(384) }

        private mutating func key(_ name: StaticString) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            bytes.append(UInt8(ascii: "\""))
            name.withUTF8Buffer { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }

        mutating func member(_ name: StaticString, _ value: Int64?) {
            guard let value else { return }
            key(name)
            bytes.append(contentsOf: String(value).utf8)
        }

        mutating func member(_ name: StaticString, _ value: Bool) {
            key(name)
            bytes.append(contentsOf: (value ? "true" : "false").utf8)
        }

        mutating func member(_ name: StaticString, _ value: String?) {
            guard let value else { return }
            key(name)
            bytes.append(UInt8(ascii: "\""))
            for b in value.utf8 {
                switch b {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, b])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, b])
                case UInt8(ascii: "/"): bytes.append(contentsOf: [0x5C, b])
                case 0x08: bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
                case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0C: bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
                case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0..<0x20:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]])
                default: bytes.append(b)
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }

        mutating func finish() -> String {
            bytes.append(UInt8(ascii: "}"))
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
