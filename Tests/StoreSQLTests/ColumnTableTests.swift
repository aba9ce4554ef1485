import StoreSQL
import SubscriptionEngine
import SubscriptionModel
import Testing

/// The column tables (row mapping by name) and the schema description (column types) are the two
/// places a column is declared: they must agree, and rows must map by name, not by position.
@Suite("StoreSQL: column tables and schema")
struct ColumnTableTests {
    @Test func everyColumnTableMatchesTheSchemaColumnForColumn() throws {
        let schema = StoreSchema.currentTables
        for table in StoreTables.all {
            let described = try #require(schema.first { $0.name == table.name }, "no schema for \(table.name)")
            #expect(described.columns.map(\.name) == table.columns, "columns of \(table.name)")
        }
        // Every schema table has a column table.
        #expect(Set(schema.map(\.name)) == Set(StoreTables.all.map(\.name)))
    }

    @Test func rowsAreReadByColumnNameInAnyOrder() throws {
        let order = Order(
            id: 7, no: "o-1", userId: "u", productId: "p", status: .paid, tradeNo: "t-1", originNo: "t-0",
            purchaseDate: 10, expiresDate: nil, environment: "Sandbox", price: 4990, currency: "EUR", createdAt: 1,
            updatedAt: 2)
        let table = StoreTables.orders
        let values = [SQLValue.int(order.id)] + table.insertValues(order)
        // Reversed columns, upper-case names, and an extra column the table does not know.
        let names = (table.columnNames + ["extra"]).reversed().map { $0.uppercased() }
        let row = SQLRow(values: (values + [.text("ignored")]).reversed(), source: "test")
        let decoded = try table.decode(SQLResult(columns: names, rows: [row]))
        #expect(decoded.first == order)
        #expect(table.updateValues(order).last == .int(7))
    }

    @Test func badValuesNameTheirColumn() {
        let table = StoreTables.contracts
        let contract = Contract(id: 1, contractId: "c", userId: "u", productId: "p")
        var values = [SQLValue.int(1)] + table.insertValues(contract)
        values[4] = .text("bogus")  // status
        #expect(throws: StoreError.failure("column status holds unknown ContractStatus 'bogus' [q]")) {
            _ = try table.decode(SQLResult(columns: table.columnNames, rows: [SQLRow(values: values, source: "q")]))
        }
        values[4] = .null
        #expect(throws: StoreError.failure("unexpected NULL in column status [q]")) {
            _ = try table.decode(SQLResult(columns: table.columnNames, rows: [SQLRow(values: values, source: "q")]))
        }
        #expect(throws: StoreError.self) {
            _ = try table.decode(SQLResult(columns: Array(table.columnNames.dropLast()), rows: []))
        }
    }

    @Test func statementsComeFromTheColumnTable() {
        let audit = StoreTables.audit
        #expect(audit.insert.hasPrefix("INSERT INTO iap_audit (at, actor, command, reason, ticket, entity, entity_key, "))
        #expect(audit.insert.hasSuffix("VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"))
        #expect(StoreTables.orders.update.hasPrefix("UPDATE orders SET no = ?, user_id = ?, product_id = ?, status = ?, "))
        #expect(StoreTables.orders.update.hasSuffix(" = ? WHERE id = ?"))
        #expect(StoreSQL.unmatchedLedger.hasPrefix("SELECT l.id AS id, l.received_at AS received_at, "))
        // One placeholder per written column in every insert, plus the id in every update.
        for (name, insert, update, count) in [
            ("orders", StoreTables.orders.insert, StoreTables.orders.update, StoreTables.orders.columnNames.count),
            ("ledger", StoreTables.ledger.insert, StoreTables.ledger.update, StoreTables.ledger.columnNames.count),
        ] {
            #expect(insert.filter { $0 == "?" }.count == count - 1, "\(name)")
            #expect(update.filter { $0 == "?" }.count == count, "\(name)")
        }
    }

    @Test func typeNamesComeFromTheDialect() {
        let dialect = SQLDialect(
            beginRead: [], beginWrite: [], forUpdate: "", locksRows: false, noLimit: -1, savepoint: "",
            releaseSavepoint: "", rollbackToSavepoint: "", releaseAfterRollbackTo: false, insertIgnore: "",
            onDuplicateDoNothing: "ON CONFLICT ({key}) DO NOTHING", schemaProbeBegin: nil, tableExists: "",
            commitOutcomeCanBeUnknown: false, typeNames: [.string: "VARCHAR({size})", .integer: "BIGINT"])
        #expect(dialect.typeName(.string(255)) == "VARCHAR(255)")
        #expect(dialect.typeName(.integer) == "BIGINT")
        #expect(
            dialect.insertIgnoringDuplicate(into: "t", columns: ["a", "b"], key: "a")
                == "INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT (a) DO NOTHING")
    }
}
