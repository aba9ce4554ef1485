import ClientSubmissions
import IAPFoundation
import IAPOperations

/// A `--gap-report` file: saved Get Notification History responses, as one JSON document, a JSON
/// array of them, or one per line.
extension NotificationHistory {
    /// Why a saved history file gives no notifications.
    public enum SavedFileRefusal: Error, Sendable, Equatable {
        /// The text is not one JSON document, and its `line`th non-empty line is not JSON either.
        case lineNotJSON(line: Int, reason: String)
        /// A document is not a Get Notification History response.
        case response(ResponseRefusal)
        /// The responses hold no notification.
        case noNotifications
    }

    /// The documents of a saved file: the whole text when it is one JSON document (its elements when
    /// that is an array), else each line that is not blank (lines counted without the empty ones).
    public static func documents(inSaved text: String) throws(SavedFileRefusal) -> [JSONValue] {
        if let whole = try? JSONText.parse(text) {
            if case .array(let list) = whole { return list }
            return [whole]
        }
        var documents: [JSONValue] = []
        for (index, line) in text.split(separator: "\n").enumerated() where !line.allSatisfy(\.isWhitespace) {
            do { documents.append(try JSONText.parse(String(line))) } catch {
                throw .lineNotJSON(line: index + 1, reason: error.reason)
            }
        }
        return documents
    }

    /// The notifications of every response in a saved file, in order (``entries(in:)`` of each of
    /// ``documents(inSaved:)``); at least one.
    public static func entries(inSaved text: String) throws(SavedFileRefusal) -> [Entry] {
        var entries: [Entry] = []
        for document in try documents(inSaved: text) {
            do { entries += try Self.entries(in: document) } catch { throw .response(error) }
        }
        guard !entries.isEmpty else { throw .noNotifications }
        return entries
    }
}
