import AppStoreJWS
import AppleFlows
import ClientSubmissions
import IAPOperations
import ItemInput
import PersonalData
import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import IAPCommandLine

/// The command layer's wording of ``BatchRowsError`` and ``BatchFieldError``: the messages and
/// hints `--from` batches were refused with before parsing moved to IAPOperations (refused before
/// any database is opened).
@Suite("--from batch errors as the command line words them")
struct BatchInputMessagesTests {
    static let jsonHint =
        "hint: each line must be one JSON object, e.g. {\"no\": \"…\", \"status\": \"paid\"}; or give CSV with a header line\n"

    static func update(_ stdin: String) -> RunResult {
        iapctl(["orders", "update", "--from", "-", "--reason", "r"], stdin: stdin)
    }

    @Test(arguments: [
        ("{\"no\": \"o1\", \"status\": \"paid\"}\n\n{\"no\": }\n", "error: line 3: not JSON (column 8: unexpected character)\n" + jsonHint),
        ("{\"no\": \"a\", \"no\": \"b\"}\n", "error: line 1: not JSON (column 13: duplicate object key \"no\")\n" + jsonHint),
        ("no,,status\n", "error: line 1: the CSV header has an empty name in column 2\n"),
        ("no,NO\n", "error: line 1: the CSV header names 'no' twice\n"),
        (
            "no,status\no1,paid\no2,paid,x\n",
            "error: line 3: expected 2 fields (no,status), found 3\nhint: quote cells that contain commas: \"a,b\"\n"
        ),
        (
            "no,status\no1,pa\"id\n",
            "error: line 2: a quote inside an unquoted CSV cell\nhint: quote the whole cell and double inner quotes: \"a \"\"b\"\"\"\n"
        ),
        ("no,reason\no1,\"two\nlines\n", "error: line 2: unterminated quoted CSV cell\n"),
        (
            "{\"no\": \"o1\", \"reason\": \"a\\u0007b\"}\n",
            "error: line 1: 'reason' holds a control character (\\u{7})\n"
                + "hint: remove control and bidi characters from the input; nothing was changed\n"
        ),
        ("{\"no\": true, \"status\": \"paid\"}\n", "error: line 1: no must be a non-empty string, found a boolean\n"),
    ])
    func refusedRows(_ input: String, _ stderr: String) {
        let result = Self.update(input)
        #expect(result.code == 65)
        #expect(result.err == stderr)
        #expect(result.out.isEmpty)
    }

    /// ``CorrectionRowError`` as `orders update --from` words it: each message, hint and exit code.
    @Test(arguments: [
        (
            "{\"no\": \"o1\", \"status\": \"paid\"}\n{\"status\": \"paid\"}\n",
            "error: line 2: no no or trade_no to say which order\nhint: every row needs \"no\" or \"trade_no\"\n"
        ),
        (
            "{\"no\": \"o1\", \"colour\": \"red\"}\n",
            "error: line 1: unknown field 'colour' (allowed: no, trade_no, status, user_id, product_id, expires_date, "
                + "origin_no, reason, ticket)\n"
        ),
        (
            "no,status,reason\no1,,why\n",
            "error: line 2: nothing to change (fields: status, user_id, product_id, expires_date, trade_no, origin_no)\n"
        ),
        ("{\"no\": null, \"trade_no\": \"t\", \"status\": \"paid\"}\n", "error: line 1: no must be a non-empty string, found null\n"),
        (
            "{\"no\": \"o1\", \"status\": \"paid\", \"reason\": \" \"}\n",
            "error: line 1: reason must be a non-empty string, found a blank string\n"
        ),
        ("{\"no\": \"o1\", \"status\": \"paid\", \"ticket\": {}}\n", "error: line 1: ticket must be a non-empty string, found an object\n"),
    ])
    func refusedCorrectionRows(_ input: String, _ stderr: String) {
        let result = Self.update(input)
        #expect(result.code == 65)
        #expect(result.err == stderr)
        #expect(result.out.isEmpty)
    }

    @Test func correctionRowErrorsAsMessages() {
        let missing = CorrectionRowError.missingKey(line: 7, entity: .contract, keyFields: ["contract_id"]).cliError
        #expect(missing.message == "line 7: no contract_id to say which contract")
        #expect(missing.hint == "every row needs \"contract_id\"")
        #expect(missing.code == .dataError)
        let long = CorrectionRowError.field(line: 3, .tooLong(field: "ticket", length: 300, limit: 255)).cliError
        #expect(long.message == "line 3: ticket is 300 characters long; the limit is 255")
        #expect(long.hint == nil)
        #expect(
            CorrectionRowError.nothingToChange(line: 2, editableFields: ["status", "auto_renew"]).cliError.message
                == "line 2: nothing to change (fields: status, auto_renew)")
    }

    /// `--reason` must say something; the two commands' hints differ.
    @Test func aBlankReasonIsAUsageError() {
        let update = iapctl(["orders", "update", "o1", "--status", "paid", "--reason", " "])
        #expect(update.code == 64)
        #expect(
            update.err
                == "error: --reason must say why\nhint: e.g. --reason 'refund approved by support'\n"
                + "Usage: iapctl orders update [options] [<key>]\nSee 'iapctl orders update --help'.\n")
        let fromFile = iapctl(["orders", "update", "--from", "-", "--reason", ""], stdin: "{\"no\": \"o1\"}\n")
        #expect(fromFile.code == 64)
        #expect(fromFile.err.hasPrefix("error: --reason must say why\nhint: e.g. --reason 'refund approved by support'\n"))
        let undo = iapctl(["audit", "undo", "3", "--reason", "  "])
        #expect(undo.code == 64)
        #expect(
            undo.err
                == "error: --reason must say why\nhint: e.g. --reason 'status set to refunded by mistake'\n"
                + "Usage: iapctl audit undo --reason <text> [options] [<id>...]\nSee 'iapctl audit undo --help'.\n")
    }

    @Test func noRowsIsNoInput() {
        let result = Self.update("no,status\n")
        #expect(result.code == 66)
        #expect(result.err == "error: no rows in stdin\n")
    }

    @Test func fieldsOfNewOrders() {
        let long = String(repeating: "u", count: 300)
        for (input, stderr) in [
            ("{\"user\": \"\", \"product\": \"p\"}", "error: line 1: user must be a non-empty string, found an empty string\n"),
            ("{\"user\": \"\(long)\", \"product\": \"p\"}", "error: line 1: user is 300 characters long; the limit is 255\n"),
        ] {
            let result = iapctl(["orders", "create", "--from", "-"], stdin: input)
            #expect(result.code == 65)
            #expect(result.err == stderr)
        }
    }

    @Test func fieldErrorsAsMessages() {
        #expect(
            BatchFieldError.notTime(field: "expires_date", value: .string("soon")).cliError.message
                == "expires_date 'soon' is not a time (use milliseconds since 1970 or ISO-8601 like 2025-12-31T00:00:00Z)")
        #expect(
            BatchFieldError.notFlag(field: "auto_renew", value: .int(2)).cliError.message
                == "auto_renew 2 is not on/off (use on, off, true or false)")
        #expect(
            BatchFieldError.unknownChoice(field: "status", value: .string("lost"), allowed: ["pending", "paid"]).cliError
                .message == "unknown status 'lost' (allowed: pending, paid)")
        #expect(BatchRowsError.notAnObject(line: 2, found: .array([])).cliError.message == "line 2: expected a JSON object, found an array")
    }

    /// `orders create`'s refusals of a new order, and `orders/contracts update`'s of a field's value.
    @Test func draftAndCorrectionErrorsAsMessages() {
        #expect(
            OrderCreation.DraftError.unknownField("price").cliError.message == "unknown field 'price' (allowed: user, product, no)")
        #expect(OrderCreation.DraftError.missing("user").cliError.message == "missing \"user\"")
        #expect(
            OrderCreation.DraftError.notPrintable(field: "product").cliError.message
                == "product must be non-empty text without control characters")
        let badNumber = OrderCreation.DraftError.badNumber("a b").cliError
        #expect(badNumber.message == "order number 'a b' must be 1–128 characters without spaces")
        #expect(badNumber.hint == "leave it out to get a new UUID")
        #expect(
            OrderCreation.DraftError.field(.tooLong(field: "user", length: 300, limit: 255)).cliError.message
                == "user is 300 characters long; the limit is 255")
        #expect(CorrectionFieldError.notEditable(field: "no").cliError.message == "field 'no' cannot be changed")
        #expect(
            CorrectionError.invalidValue(line: 4, .invalid(.notFlag(field: "auto_renew", value: .string("maybe")))).cliError
                .message == "line 4: auto_renew 'maybe' is not on/off (use on, off, true or false)")
    }
}

/// `InputItems` over an `InputReader`: lines the reader skips become items, its other errors stay `CLIError`s.
@Suite("InputItems reads through InputReader")
struct InputItemsReaderTests {
    @Test func skippedLinesAreItemsAndReadingGoesOn() throws {
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: (1 << 20) + 1)
        let bytes = Array("a.b.c\n".utf8) + [0xC3, 0x28, 0x0A] + long + [0x0A] + Array("d.e.f\n".utf8)
        var items = InputItems(InputReader(bytes: bytes))
        var read: [WebhookBody.Item] = []
        while let item = try items.next() { read.append(item) }
        #expect(
            read == [
                WebhookBody.Item(line: 1, result: .success("a.b.c")),
                WebhookBody.Item(line: 2, result: .failure(VerificationFailure(.invalidJWTFormat, "line is not valid UTF-8: skipped"))),
                WebhookBody.Item(
                    line: 3, result: .failure(VerificationFailure(.invalidJWTFormat, "line is longer than 1048576 bytes: skipped"))),
                WebhookBody.Item(line: 4, result: .success("d.e.f")),
            ])
        #expect(!items.isEmpty)
        var blank = InputItems(InputReader(string: "\n \n"))
        #expect(try blank.next() == nil)
        #expect(blank.isEmpty)
    }

    @Test func anUnreadableDocumentIsTheReadersError() {
        let body = Array("{\n  \"signedPayload\": \"a.b.c\",\n  \"x\": \"".utf8) + [0xC3] + Array("\"\n}\n".utf8)
        var items = InputItems(InputReader(bytes: body))
        #expect(throws: CLIError.self) { try items.next() }
    }
}
