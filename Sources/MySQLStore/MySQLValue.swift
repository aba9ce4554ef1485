import StoreSQL

/// The backends share one value and row type (``SQLValue``, ``SQLRow``).
typealias MySQLValue = SQLValue
typealias MySQLRow = SQLRow
