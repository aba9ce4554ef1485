import Testing

@testable import StoreSQL

/// The one round-trip counter of the server backends, parameterised by the backend's name.
@Suite struct RoundTripsTests {
    /// Each connection counts its own round trips, and each also counts in its backend's process total.
    @Test func connectionsCountTheirOwnAndTheBackendsTotal() {
        let process = RoundTrips(backend: "exampledb")
        let first = RoundTripCounter(process)
        let second = RoundTripCounter(process)
        first.add("connect")
        first.add("SELECT 1")
        second.add("connect")
        #expect(first.count == 2)
        #expect(second.count == 1)
        #expect(process.count == 3)
        // Another backend's counter is apart.
        let other = RoundTrips(backend: "otherdb")
        RoundTripCounter(other).add("connect")
        #expect(process.count == 3 && other.count == 1)
    }

    /// The report names the backend (what scripts/bench and scripts/budgets look for) and is off
    /// unless `IAPCTL_<BACKEND>_ROUND_TRIPS=1`.
    @Test func theReportNamesTheBackend() {
        let process = RoundTrips(backend: "exampledb")
        RoundTripCounter(process).add("connect")
        #expect(!process.reporting)
        #expect(process.report.hasPrefix("exampledb round trips: 1\n"))
    }
}
