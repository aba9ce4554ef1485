import DerivationTestSupport
import Foundation
import IAPFoundation
import StoreTestSupport
import Testing

@testable import SubscriptionDerivation
@testable import SubscriptionModel

/// Each rule of the derivation keeps every fact it could still select: over random histories cut
/// at each event, the rule's selection from the facts it keeps (with those of the rules it reads)
/// plus the facts added after the cut (those the snapshot admits, as far as they add to what the
/// rule keeps) equals its selection from every fact plus the same facts. A rule whose kept facts drop one it could still select fails its own test,
/// even when another rule happens to keep that fact for the snapshot.
@Suite("Derivation: what each rule keeps never drops a fact it could still select")
struct RuleKeepsTests {
    static let now: Int64 = 1_800_000_000_000

    /// One cut of a history: the facts before it, their derivation, and the facts added after it
    /// (events the snapshot of the facts before admits, as the engine would decide them from it).
    struct Cut {
        var old: [Fact]
        var derived: Derived
        var added: [Fact]
        var label: String
    }

    /// Random histories (``SubscriptionHistory/random(_:)``), each cut at every event after
    /// which a snapshot stands for the history and the next events add to it.
    static func makeCuts(seeds: Range<UInt64>) -> [Cut] {
        var cuts: [Cut] = []
        for seed in seeds {
            var rng = SplitMix(seed: seed)
            let events = SubscriptionHistory.random(&rng).compactMap { step -> SubscriptionEvent? in
                if case .event(let event) = step { return event }
                return nil
            }
            for cut in 1..<max(events.count, 1) {
                let old = events[..<cut].flatMap(\.facts)
                let before = FactSet(old)
                let derived = Derivation.derive(before, now: now)
                guard
                    let snapshot = SubscriptionSnapshot.make(
                        facts: before, derived: derived, carried: nil, newestStoredDate: old.map(\.signedDate).max())
                else { continue }
                var added: [Fact] = []
                for event in events[cut...] {
                    let facts = event.facts
                    guard !facts.isEmpty, facts.allSatisfy({ admitted($0, by: snapshot, old: before) }) else { break }
                    added += facts
                }
                guard !added.isEmpty else { continue }
                cuts.append(Cut(old: old, derived: derived, added: added, label: "seed \(seed) cut \(cut)"))
            }
        }
        return cuts
    }

    /// A fact the engine decides from the snapshot: one it admits, and for a transaction either a
    /// new one or a version of a kept one that leaves its period as it was.
    static func admitted(_ fact: Fact, by snapshot: SubscriptionSnapshot, old: FactSet) -> Bool {
        guard snapshot.admits(fact, of: fact.originalTransactionId) else { return false }
        guard fact.kind == .transaction, let versions = old.transactions[fact.key] else { return true }
        guard snapshot.transactions.contains(fact.key), let tx = try? FactBody.transaction(fact.body) else {
            return false
        }
        return versions.allSatisfy { SubscriptionSnapshot.isSamePeriod($0.value, tx) }
    }

    /// What `rule` keeps of the facts before the cut, with what the rules it reads keep.
    static func kept(by rule: any DerivationRule.Type, _ cut: Cut) -> KeptFacts {
        var reading = FactReading(FactSet(cut.old))
        var kept = KeptFacts()
        var rules = [rule]
        var seen: Set<String> = []
        while let next = rules.popLast() {
            guard seen.insert(String(describing: next)).inserted else { continue }
            kept.formUnion(next.kept(&reading, derived: cut.derived))
            rules += next.reads
        }
        return kept
    }

    /// The cuts on which `rule`'s selection from its kept facts differs from the full one, and on
    /// how many cuts its kept facts left something out.
    static func check(_ rule: any DerivationRule.Type, cuts: [Cut]) -> (disagreements: [String], pruning: Int) {
        var pruning = 0
        var disagreements: [String] = []
        for cut in cuts {
            let kept = kept(by: rule, cut)
            let keptFacts = cut.old.filter(kept.keeps)
            // Added as far as they add to what the rule keeps: a version of a transaction it left
            // out is not (the snapshot keeps the transactions whose versions it admits).
            let oldTransactions = Set(cut.old.lazy.filter { $0.kind == .transaction }.map(\.key))
            let added = Array(
                cut.added.prefix { $0.kind != .transaction || !oldTransactions.contains($0.key) || kept.transactions.contains($0.key) })
            guard !added.isEmpty else { continue }
            if keptFacts.count < cut.old.count { pruning += 1 }
            let partial = Derivation.derive(FactSet(keptFacts + added), now: now)
            let full = Derivation.derive(FactSet(cut.old + added), now: now)
            if !rule.agrees(partial, full) {
                disagreements.append("\(cut.label): kept \(keptFacts.count) of \(cut.old.count) facts")
            }
        }
        return (disagreements, pruning)
    }

    static let cuts = makeCuts(seeds: 0..<40)

    @Test(arguments: Derivation.rules.map { String(describing: $0) })
    func theRuleKeepsEveryFactItCouldStillSelect(rule name: String) throws {
        let rule = try #require(Derivation.rules.first { String(describing: $0) == name })
        let (disagreements, pruning) = Self.check(rule, cuts: Self.cuts)
        #expect(
            disagreements.isEmpty, "\(name) differs from the full derivation on \(disagreements.count) cuts: \(disagreements.prefix(5))")
        // The test says something only if the rule's kept facts leave facts out of most cuts.
        #expect(pruning * 2 > Self.cuts.count, "\(name) left facts out of \(pruning) of \(Self.cuts.count) cuts")
    }

    /// ``AutoRenewRule`` with its renewal-info bound one millisecond too high: it drops the renewal
    /// info that decides auto-renew. The other rules keep that fact by chance (the newest renewal
    /// info), so the snapshot stays right, but the rule's own test finds the wrong bound.
    enum TooTightAutoRenewRule: DerivationRule {
        static var reads: [any DerivationRule.Type] { AutoRenewRule.reads }
        static func kept(_ reading: inout FactReading, derived: Derived) -> KeptFacts {
            var kept = AutoRenewRule.kept(&reading, derived: derived)
            kept.renewalsSince = kept.renewalsSince.map { $0 + 1 }
            return kept
        }
        static func selection(_ derived: Derived) -> FieldReason? { AutoRenewRule.selection(derived) }
    }

    @Test func aPruneBoundTooTightIsCaught() {
        #expect(!Self.check(TooTightAutoRenewRule.self, cuts: Self.cuts).disagreements.isEmpty)
    }

    /// What no rule keeps is settled: the orders of the transactions the snapshot leaves out are the
    /// same with the added facts as without them.
    @Test func theOrdersNoRuleKeepsAreSettled() {
        var settled = 0
        for cut in Self.cuts {
            let kept = Derivation.kept(FactSet(cut.old), derived: cut.derived)
            let full = Derivation.derive(FactSet(cut.old + cut.added), now: Self.now)
            for order in cut.derived.orders where !kept.transactions.contains(order.transaction.transactionId) {
                settled += 1
                #expect(
                    full.orders.first { $0.transaction.transactionId == order.transaction.transactionId } == order,
                    "\(cut.label): order \(order.transaction.transactionId)")
            }
        }
        #expect(settled > 0)
    }

    /// The snapshot (every rule's kept facts) plus the added facts derives the full derivation's
    /// contract (but for the newest signed date, which the snapshot carries as a value).
    @Test func theSnapshotDerivesTheFullContract() {
        for cut in Self.cuts {
            let kept = Derivation.kept(FactSet(cut.old), derived: cut.derived)
            var partial = Derivation.derive(FactSet(cut.old.filter(kept.keeps) + cut.added), now: Self.now)
            let full = Derivation.derive(FactSet(cut.old + cut.added), now: Self.now)
            partial.contract?.newestSignedDate = full.contract?.newestSignedDate
            #expect(partial.contract == full.contract, "\(cut.label)")
        }
    }
}
