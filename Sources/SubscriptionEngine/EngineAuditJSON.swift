import IAPFoundation

/// The audit trail's before/after JSON of orders and contracts, byte for byte what `JSONEncoder`
/// with `.sortedKeys` writes for them (keys in sorted order, nil members left out, `/` written as
/// `\/`, control characters escaped: ``JSONWriter/Escaping/foundation``), without its generic
/// machinery: the encoder was about half of the engine's time per notification.
enum EngineAuditJSON {
    /// An order row as sorted-keys JSON.
    static func encode(_ o: Order) -> String {
        var w = JSONObjectWriter(escaping: .foundation, capacity: 384)
        w.addIfPresent("createdAt", o.createdAt)
        w.addIfPresent("currency", o.currency)
        w.addIfPresent("environment", o.environment)
        w.addIfPresent("expiresDate", o.expiresDate)
        w.addIfPresent("id", o.id)
        w.addIfPresent("no", o.no)
        w.addIfPresent("originNo", o.originNo)
        w.addIfPresent("price", o.price)
        w.addIfPresent("productId", o.productId)
        w.addIfPresent("purchaseDate", o.purchaseDate)
        w.addIfPresent("status", o.status.rawValue)
        w.addIfPresent("tradeNo", o.tradeNo)
        w.addIfPresent("updatedAt", o.updatedAt)
        w.addIfPresent("userId", o.userId)
        return w.json
    }

    /// A contract row as sorted-keys JSON.
    static func encode(_ c: Contract) -> String {
        var w = JSONObjectWriter(escaping: .foundation, capacity: 384)
        w.add("autoRenew", c.autoRenew)
        w.addIfPresent("contractId", c.contractId)
        w.addIfPresent("createdAt", c.createdAt)
        w.addIfPresent("environment", c.environment)
        w.addIfPresent("expiresDate", c.expiresDate)
        w.addIfPresent("id", c.id)
        w.addIfPresent("lastEventDate", c.lastEventDate)
        w.addIfPresent("nextProductId", c.nextProductId)
        w.addIfPresent("productId", c.productId)
        w.addIfPresent("status", c.status.rawValue)
        w.addIfPresent("updatedAt", c.updatedAt)
        w.addIfPresent("userId", c.userId)
        return w.json
    }
}
