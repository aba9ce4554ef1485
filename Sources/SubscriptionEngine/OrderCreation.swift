/// Why new orders were refused. Nothing is written when one is thrown.
public enum OrderCreationError: Error, Equatable, Sendable {
    /// The same order number twice in one batch.
    case repeated(line: Int?, no: String)
    /// An order with this number exists already.
    case exists(line: Int?, no: String)
    /// A unique key was violated when inserting.
    case conflict(line: Int?, String)
}

/// `orders create`: new pending orders (the numbers the app passes to Apple as appAccountToken),
/// each with an audit row, in the caller's transaction (a batch is all or nothing).
public enum OrderCreation {
    /// Inserts `orders` in order, stamped `context.now`; returns them with their ids.
    ///
    /// - Parameter orders: each with the input line it came from (nil for the command line).
    /// - Throws: ``OrderCreationError``; store errors.
    public static func create(
        _ orders: [(line: Int?, order: Order)], context: CorrectionContext, in session: any StoreSession
    ) throws -> [Order] {
        var created: [Order] = []
        var seen = Set<String>()
        for (line, request) in orders {
            if !seen.insert(request.no).inserted { throw OrderCreationError.repeated(line: line, no: request.no) }
            if try session.order(no: request.no) != nil { throw OrderCreationError.exists(line: line, no: request.no) }
            var order = request
            order.createdAt = context.now
            order.updatedAt = context.now
            do {
                order = try session.insertOrder(order)
            } catch StoreError.conflict(let message) {
                throw OrderCreationError.conflict(line: line, message)
            }
            _ = try session.appendAudit(
                AuditEntry(
                    at: context.now, actor: context.actor, command: context.command, entity: .order, key: order.no,
                    before: nil, after: CorrectionService.auditJSON(order)))
            created.append(order)
        }
        return created
    }
}
