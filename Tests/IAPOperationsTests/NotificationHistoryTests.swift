import AppStoreJWS
import AppleFlows
import ClientSubmissions
import Foundation
import IAPOperations
import ItemInput
import JWSForge
import PersonalData
import SubscriptionEngine
import SubscriptionModel
import Testing

/// The gap report's core on every backend: which of Apple's history the ledger never applied, and
/// `--apply` replaying exactly those.
@Suite("Notification history gaps")
struct NotificationHistoryTests {
    func gaps(_ world: World, _ history: [String], apply: Bool, dryRun: Bool = false) throws -> NotificationHistory.Gaps {
        try NotificationHistory.gaps(
            in: history.map { NotificationHistory.Entry(jws: $0) }, verifier: world.verifier, store: world.store,
            engine: SubscriptionEventEngine(), context: world.context, apply: apply, dryRun: dryRun)
    }

    static func savedRefusal(_ text: String) -> NotificationHistory.SavedFileRefusal? {
        do {
            _ = try NotificationHistory.entries(inSaved: text)
            return nil
        } catch {
            return error
        }
    }

    @Test func aSavedFileIsOneResponseAnArrayOfThemOrOnePerLine() throws {
        let one = #"{"notificationHistory":[{"signedPayload":"a.b.c"},{"signedPayload":"d.e.f"}],"hasMore":true}"#
        let two = #"{"notificationHistory":[{"signedPayload":"g.h.i","sendAttempts":[{"attemptDate":3}]}]}"#
        #expect(try NotificationHistory.entries(inSaved: one).map(\.jws) == ["a.b.c", "d.e.f"])
        // Pretty-printed: one document over several lines.
        let pretty = "{\n  \"notificationHistory\": [\n    {\"signedPayload\": \"a.b.c\"}\n  ]\n}\n"
        #expect(try NotificationHistory.documents(inSaved: pretty).count == 1)
        #expect(try NotificationHistory.entries(inSaved: pretty).map(\.jws) == ["a.b.c"])
        let array = "[\(one),\(two)]"
        #expect(try NotificationHistory.documents(inSaved: array).count == 2)
        #expect(try NotificationHistory.entries(inSaved: array).map(\.jws) == ["a.b.c", "d.e.f", "g.h.i"])
        let lines = "\(one)\n\n  \n\(two)\n"
        #expect(try NotificationHistory.documents(inSaved: lines).count == 2)
        let entries = try NotificationHistory.entries(inSaved: lines)
        #expect(entries.map(\.jws) == ["a.b.c", "d.e.f", "g.h.i"])
        #expect(entries[2].attempts == [NotificationGaps.SendAttempt(date: 3, result: nil)])
    }

    @Test func aSavedFileIsRefusedWithWhereAndWhy() throws {
        let one = #"{"notificationHistory":[{"signedPayload":"a.b.c"}]}"#
        // Lines are counted without the empty ones (a blank one of spaces counts).
        guard case .lineNotJSON(let line, let reason)? = Self.savedRefusal("\(one)\n\n \n{oops\n\(one)") else {
            Issue.record("a line that is not JSON was taken")
            return
        }
        #expect(line == 3)
        #expect(!reason.isEmpty)
        #expect(Self.savedRefusal("\(one)\n{\"hasMore\":false}") == .response(.noHistoryArray))
        #expect(Self.savedRefusal(#"[{"notificationHistory":[{"sendAttempts":[]}]}]"#) == .response(.noSignedPayload))
        #expect(Self.savedRefusal(#"{"notificationHistory":[]}"#) == .noNotifications)
        #expect(Self.savedRefusal("[]") == .noNotifications)
        #expect(Self.savedRefusal("\n\n") == .noNotifications)
    }

    @Test func entriesOfAResponseKeepApplesOrderAndSendAttempts() throws {
        let response = try JSONText.parse(
            #"{"notificationHistory":[{"signedPayload":"a.b.c","sendAttempts":[{"attemptDate":5,"sendAttemptResult":"TIMED_OUT"},{"attemptDate":9,"sendAttemptResult":"SUCCESS"}]},{"signedPayload":"d.e.f"}],"hasMore":false}"#
        )
        let entries = try NotificationHistory.entries(in: response)
        #expect(entries.map(\.jws) == ["a.b.c", "d.e.f"])
        #expect(
            entries[0].attempts == [
                NotificationGaps.SendAttempt(date: 5, result: "TIMED_OUT"), NotificationGaps.SendAttempt(date: 9, result: "SUCCESS"),
            ])
        #expect(entries[1].attempts.isEmpty)
        #expect(try NotificationHistory.entries(in: try JSONText.parse(#"{"notificationHistory":[]}"#)).isEmpty)

        #expect(throws: NotificationHistory.ResponseRefusal.noHistoryArray) {
            try NotificationHistory.entries(in: try JSONText.parse(#"{"notificationHistory":{}}"#))
        }
        #expect(throws: NotificationHistory.ResponseRefusal.noHistoryArray) {
            try NotificationHistory.entries(in: try JSONText.parse(#"[1]"#))
        }
        #expect(throws: NotificationHistory.ResponseRefusal.noSignedPayload) {
            try NotificationHistory.entries(
                in: try JSONText.parse(#"{"notificationHistory":[{"signedPayload":"a.b.c"},{"signedPayload":7}]}"#))
        }
    }

    @Test(arguments: Backend.available)
    func onlyWhatTheLedgerNeverAppliedIsAGapAndApplyReplaysExactlyThat(_ backend: Backend) throws {
        let world = try World(backend)
        let forged = try RejectedItemsTests.forged(world)
        let (received, missed) = (try world.lifecycle(0)[0], try world.lifecycle(1)[0])
        _ = try world.commit([received])
        let history = [forged, received, missed, missed]

        let report = try gaps(world, history, apply: false).rows
        #expect(report.count == 2)
        guard case .rejected = report[0], case .missing(let event, _, .neverReceived, _, nil) = report[1] else {
            Issue.record("unexpected gaps: \(report)")
            return
        }
        #expect(event.notificationUUID == "buy-1")
        #expect(try world.counts.ledger == 1, "a report writes nothing")

        #expect(try gaps(world, history, apply: true, dryRun: true).rows.count == 2)
        #expect(try world.counts.ledger == 1, "a dry run writes nothing")

        let applied = try gaps(world, history, apply: true).rows
        guard case .missing(_, _, .neverReceived, _, let outcome?) = applied.last else {
            Issue.record("not applied: \(applied)")
            return
        }
        #expect(outcome.verdict == .applied)
        #expect(try world.order(1)?.status == .paid)
        // The forged item is kept as rejected (once); nothing is missing any more.
        #expect(try world.counts.ledger == 3)
        #expect(try gaps(world, history, apply: true).rows.count == 1)
        #expect(try world.counts.ledger == 3)
    }

    /// The counts the report's summary line and exit status come from: applied (or would be, in a dry
    /// run), still missing (never replayed, or replayed without success), rejected.
    @Test(arguments: Backend.available)
    func theGapsCountWhatWasAppliedWhatIsStillMissingAndWhatWasRejected(_ backend: Backend) throws {
        let world = try World(backend)
        let forged = try RejectedItemsTests.forged(world)
        let (received, missed) = (try world.lifecycle(0)[0], try world.lifecycle(1)[0])
        // A renewal of a subscription no order bought: the engine cannot match it.
        let orphan = try world.lifecycle(7)[1]
        _ = try world.commit([received])
        let history = [forged, received, missed, orphan, missed]

        func counts(_ gaps: NotificationHistory.Gaps) -> [Int] { [gaps.applied, gaps.remaining, gaps.rejected] }
        let report = try gaps(world, history, apply: false)
        #expect(counts(report) == [0, 2, 1])
        #expect(!report.isClosed)

        let dryRun = try gaps(world, history, apply: true, dryRun: true)
        #expect(counts(dryRun) == [1, 1, 1], "the dry run would apply the missed purchase, not the orphan")
        #expect(!dryRun.isClosed)

        let applied = try gaps(world, history, apply: true)
        guard case .missing(_, _, _, _, let orphanOutcome?) = applied.rows.last else {
            Issue.record("the orphan was not replayed: \(applied.rows)")
            return
        }
        #expect(ItemOutcome(orphanOutcome.verdict) != .success)
        #expect(counts(applied) == [1, 1, 1])
        #expect(counts(try gaps(world, history, apply: true)) == [0, 1, 1], "the purchase is no longer missing")

        let closed = try gaps(world, [received, missed], apply: false)
        #expect(closed.rows.isEmpty)
        #expect(counts(closed) == [0, 0, 0])
        #expect(closed.isClosed)
        #expect(!(try gaps(world, [forged], apply: false)).isClosed, "a rejected notification keeps the gap open")
    }
}
