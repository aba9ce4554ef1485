import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import IAPCommandLine

/// Commands people copy from hints and doctor's FIX column are one shell word per value: a value
/// with shell syntax is quoted, so pasting the command cannot run anything else.
@Suite("Shell words in printed commands")
struct DoctorShellWordTests {
    @Test func doctorsFixQuotesAnOrderNumberWithShellSyntax() {
        let hostile = Order(no: "n1;touch${IFS}/tmp/x", userId: "u 1", productId: "p")
        let first = Order(no: "n0", userId: "u1", productId: "p")
        let (_, fix) = DoctorCommand.text(.sharedTransactionId(hostile, firstOrder: first, transactionId: "7"))
        #expect(fix.hasPrefix("iapctl orders update 'n1;touch${IFS}/tmp/x' --status revoked --reason "))
        let (_, owner) = DoctorCommand.text(.mixedOwners(hostile, contract: Contract(contractId: "c$(id)", userId: "u 2", productId: "p")))
        #expect(owner.contains("--user 'u 2'"))
        let plain = DoctorCommand.text(.sharedTransactionId(first, firstOrder: hostile, transactionId: "7")).fix
        #expect(plain.hasPrefix("iapctl orders update n0 --status revoked"))
    }
}
