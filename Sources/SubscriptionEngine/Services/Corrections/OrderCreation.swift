import IAPFoundation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
    /// A new order as asked for: whose, of which product, and its number (nil: a new UUID).
    public struct Draft: Sendable, Equatable {
        public var user: String
        public var product: String
        /// The number to import (an existing appAccountToken); nil for a new one.
        public var no: String?

        public init(user: String, product: String, no: String? = nil) {
            self.user = user
            self.product = product
            self.no = no
        }

        /// The draft of a batch row `{"user", "product"[, "no"]}` (`user_id`/`product_id` also
        /// read; a null or empty `no` asks for a new number). The fields are read in order, so the
        /// first bad one is reported.
        public init(fields: [(key: String, value: JSONValue)]) throws(DraftError) {
            var user: String?
            var product: String?
            var no: String?
            for (key, value) in fields {
                guard Draft.fieldNames.contains(key) else { throw .unknownField(key) }
                do throws(BatchFieldError) {
                    switch key {
                    case "user", "user_id": user = try BatchField.text(value, field: key)
                    case "product", "product_id": product = try BatchField.text(value, field: key)
                    default: no = try BatchField.optionalText(value, field: key)
                    }
                } catch {
                    throw .field(error)
                }
            }
            guard let user else { throw .missing("user") }
            guard let product else { throw .missing("product") }
            self.init(user: user, product: product, no: no)
        }

        /// The pending order, once the user and product are printable text that fits a column and
        /// the number is 1–128 characters without spaces or control characters.
        ///
        /// - Parameter newNo: the number of an order given none (a new lowercase UUID).
        public func order(newNo: () -> String = { UUID().uuidString.lowercased() }) throws(DraftError) -> Order {
            for (name, value) in [("user", user), ("product", product)] {
                guard Draft.isPrintableToken(value, allowSpaces: true) else { throw .notPrintable(field: name) }
                do { try BatchField.checkLength(value, field: name) } catch { throw .field(error) }
            }
            if let no, !Draft.isPrintableToken(no, allowSpaces: false) || no.count > Draft.maxNoLength {
                throw .badNumber(no)
            }
            return Order(no: no ?? newNo(), userId: user, productId: product, status: .pending)
        }

        /// The fields a batch row may have.
        public static let fieldNames: Set<String> = ["user", "user_id", "product", "product_id", "no"]

        /// The longest order number taken.
        public static let maxNoLength = 128

        /// Non-empty, not only white space, no control characters (nor spaces unless `allowSpaces`).
        static func isPrintableToken(_ text: String, allowSpaces: Bool) -> Bool {
            !text.isEmpty && !text.allSatisfy(\.isWhitespace)
                && !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || (!allowSpaces && $0 == " ") }
        }
    }

    /// Why a new order as asked for is refused (before anything is read or written).
    public enum DraftError: Error, Sendable, Equatable {
        /// A field of the row is not text, or longer than a column takes.
        case field(BatchFieldError)
        /// A batch row field other than user, product and no.
        case unknownField(String)
        /// A batch row without `user` or without `product` (the name).
        case missing(String)
        /// `user` or `product` (the name) is empty, blank, or holds a control character.
        case notPrintable(field: String)
        /// The order number given is empty, too long, or holds a space or control character.
        case badNumber(String)
    }

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
