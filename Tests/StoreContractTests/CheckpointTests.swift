import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// Job checkpoints (`iap_checkpoints`): where Notification History sync and `apple reconcile --all`
/// resume, saved in the transaction of the work they mark.
@Suite("Store contract: job checkpoints")
struct CheckpointTests {
    @Test(arguments: StoreBackend.available)
    func aCheckpointIsSavedReplacedAndRemovedWithItsTransaction(backend: StoreBackend) throws {
        try withStore(backend) { store in
            #expect(try store.read { try $0.checkpoint(named: "history:Sandbox") } == nil)
            try store.write { try $0.saveCheckpoint(Checkpoint(name: "history:Sandbox", value: "1000", updatedAt: 1)) }
            #expect(try store.read { try $0.checkpoint(named: "history:Sandbox") }?.value == "1000")
            // Saved again: replaced, one row per name; other names are their own.
            try store.write { try $0.saveCheckpoint(Checkpoint(name: "history:Sandbox", value: "2000", updatedAt: 2)) }
            try store.write { try $0.saveCheckpoint(Checkpoint(name: "reconcile", value: "{\"after\":\"x\"}", updatedAt: 3)) }
            let saved = try #require(try store.read { try $0.checkpoint(named: "history:Sandbox") })
            #expect(saved.value == "2000" && saved.updatedAt == 2)
            #expect(try store.read { try $0.checkpoint(named: "reconcile") }?.value == "{\"after\":\"x\"}")
            // A rolled-back transaction leaves the checkpoint as it was.
            try store.write(commit: false) { try $0.saveCheckpoint(Checkpoint(name: "history:Sandbox", value: "3000", updatedAt: 4)) }
            #expect(try store.read { try $0.checkpoint(named: "history:Sandbox") }?.value == "2000")
            // Removed: gone, and removing again says there was none.
            #expect(try store.write { try $0.deleteCheckpoint(named: "history:Sandbox") })
            #expect(try store.write { try $0.deleteCheckpoint(named: "history:Sandbox") } == false)
            #expect(try store.read { try $0.checkpoint(named: "history:Sandbox") } == nil)
            #expect(try store.read { try $0.checkpoint(named: "reconcile") } != nil)
        }
    }

    @Test(arguments: StoreBackend.available)
    func aCheckpointSavedTwiceWithTheSameValueStaysOneRow(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let point = Checkpoint(name: "same", value: "v", updatedAt: 5)
            try store.write { try $0.saveCheckpoint(point) }
            try store.write { try $0.saveCheckpoint(point) }
            let saved = try #require(try store.read { try $0.checkpoint(named: "same") })
            #expect(saved.value == "v" && saved.updatedAt == 5 && saved.id > 0)
        }
    }
}
