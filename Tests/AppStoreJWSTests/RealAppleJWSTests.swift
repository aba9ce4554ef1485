import AppStoreJWS
import Testing

/// The 41 genuine Apple-signed JWS (Fixtures/real, see its README) and the 4 that must fail.
@Suite("Genuine Apple JWS")
struct RealAppleJWSTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let file: String
        let kind: PayloadKind
        let env: String?
        let bundle: String?
        let appAppleId: Int64?
        let signedDate: Int64
        let nested: [String]

        init(
            _ file: String, _ kind: PayloadKind, env: String?, bundle: String?, appAppleId: Int64?, signedDate: Int64,
            nested: [String]
        ) {
            self.file = file
            self.kind = kind
            self.env = env
            self.bundle = bundle
            self.appAppleId = appAppleId
            self.signedDate = signedDate
            self.nested = nested
        }

        var testDescription: String { file }

        /// Signed under the 2021 or 2023 leaf (expired 2023-09-24 / 2025-10-11).
        var oldLeaf: Bool { signedDate < ms("2025-09-19T19:44:51Z") }

        var bundleForConfig: String? {
            if let bundle { return bundle }
            return nil
        }
    }

    static let rows: [Row] = [
        .init(
            "01-loki-test.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger", appAppleId: nil,
            signedDate: 1757035472686, nested: []),
        .init(
            "02-loki-subscribed-resubscribe.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger",
            appAppleId: 1470168868, signedDate: 1759388776941, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "03-loki-did-renew.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger", appAppleId: 1470168868,
            signedDate: 1759302518835, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "04-loki-did-change-renewal-status-auto-renew-disabled.jws", .notification, env: "Sandbox",
            bundle: "com.loki-project.loki-messenger", appAppleId: 1470168868, signedDate: 1759388855473,
            nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "05-loki-expired-voluntary.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger",
            appAppleId: 1470168868, signedDate: 1759304012269, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "06-loki-did-change-renewal-pref-upgrade.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger",
            appAppleId: 1470168868, signedDate: 1759727799810, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "07-loki-did-change-renewal-pref-downgrade.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger",
            appAppleId: 1470168868, signedDate: 1759727838450, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "08-loki-did-change-renewal-pref.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger",
            appAppleId: 1470168868, signedDate: 1759727866231, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "09-loki-consumption-request.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger",
            appAppleId: 1470168868, signedDate: 1760591941117, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "10-loki-refund.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger", appAppleId: 1470168868,
            signedDate: 1760592122788, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "11-loki-subscribed-resubscribe-2.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger",
            appAppleId: 1470168868, signedDate: 1759727785445, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "12-loki-subscribed-resubscribe-3.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger",
            appAppleId: 1470168868, signedDate: 1760591792087, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "13-loki-expired-voluntary-2.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger",
            appAppleId: 1470168868, signedDate: 1759389041604, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "14-loki-expired-voluntary-3.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger",
            appAppleId: 1470168868, signedDate: 1759727985799, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "15-loki-did-change-renewal-status-2.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger",
            appAppleId: 1470168868, signedDate: 1759727821952, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "16-loki-did-change-renewal-status-3.jws", .notification, env: "Sandbox", bundle: "com.loki-project.loki-messenger",
            appAppleId: 1470168868, signedDate: 1759727876877, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "17-nineton-test-production.jws", .notification, env: "Production", bundle: "com.nineton.taller", appAppleId: 6450284872,
            signedDate: 1729136651128, nested: []),
        .init(
            "18-cynet-one-time-charge.jws", .notification, env: "Sandbox", bundle: "com.cynet.xingqi", appAppleId: 1659344089,
            signedDate: 1738755504471, nested: ["signedTransactionInfo"]),
        .init(
            "19-cynet-consumption-request.jws", .notification, env: "Sandbox", bundle: "com.cynet.xingqi", appAppleId: 1659344089,
            signedDate: 1738826340653, nested: ["signedTransactionInfo"]),
        .init(
            "20-cynet-refund.jws", .notification, env: "Sandbox", bundle: "com.cynet.xingqi", appAppleId: 1659344089,
            signedDate: 1738826407576, nested: ["signedTransactionInfo"]),
        .init(
            "21-cynet-refund-2.jws", .notification, env: "Sandbox", bundle: "com.cynet.xingqi", appAppleId: 1659344089,
            signedDate: 1739155560664, nested: ["signedTransactionInfo"]),
        .init(
            "22-soulmate-subscribed-initial-buy.jws", .notification, env: "Sandbox", bundle: "cn.soulmate.elf", appAppleId: 6473983973,
            signedDate: 1704252843514, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "23-qring-did-change-renewal-pref-downgrade.jws", .notification, env: "Sandbox", bundle: "com.armakom.qring.net",
            appAppleId: 6738924421, signedDate: 1743080927082, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "24-genius-did-renew.jws", .notification, env: "Sandbox", bundle: "GeniusParentingAI", appAppleId: 6747332178,
            signedDate: 1753689912307, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "25-genius-test.jws", .notification, env: "Sandbox", bundle: "GeniusParentingAI", appAppleId: nil, signedDate: 1753691806758,
            nested: []),
        .init(
            "26-genius-subscribed-resubscribe.jws", .notification, env: "Sandbox", bundle: "GeniusParentingAI", appAppleId: 6747332178,
            signedDate: 1753746759046, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "27-genius-expired-voluntary.jws", .notification, env: "Sandbox", bundle: "GeniusParentingAI", appAppleId: 6747332178,
            signedDate: 1753697156009, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "28-genius-did-change-renewal-pref-upgrade.jws", .notification, env: "Sandbox", bundle: "GeniusParentingAI",
            appAppleId: 6747332178, signedDate: 1753839954988, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "29-genius-did-change-renewal-pref-downgrade.jws", .notification, env: "Sandbox", bundle: "GeniusParentingAI",
            appAppleId: 6747332178, signedDate: 1753830140197, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "30-genius-did-change-renewal-status-auto-renew-disabled.jws", .notification, env: "Sandbox", bundle: "GeniusParentingAI",
            appAppleId: 6747332178, signedDate: 1753829288447, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "31-bartender-did-renew.jws", .notification, env: "Sandbox", bundle: "com.innovative.appBartender", appAppleId: 6443740084,
            signedDate: 1698918742048, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "32-goldies-subscribed-resubscribe.jws", .notification, env: "Sandbox", bundle: "br.com.goldies.app", appAppleId: nil,
            signedDate: 1661815837474, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
        .init(
            "33-goodheart-transaction-consumable.jws", .transaction, env: "Sandbox", bundle: "com.goodheartapp", appAppleId: nil,
            signedDate: 1739161772561, nested: []),
        .init(
            "34-tap4fun-transaction-consumable-revoked.jws", .transaction, env: nil, bundle: "com.tap4fun.bz.appstore", appAppleId: nil,
            signedDate: 1640922700641, nested: []),
        .init(
            "35-ringalarm-renewalinfo.jws", .renewalInfo, env: "Sandbox", bundle: nil, appAppleId: nil, signedDate: 1684822778492,
            nested: []),
        .init(
            "36-qring-transaction.jws", .transaction, env: "Sandbox", bundle: "com.armakom.qring.net", appAppleId: nil,
            signedDate: 1743080927054, nested: []),
        .init(
            "37-qring-renewalinfo.jws", .renewalInfo, env: "Sandbox", bundle: nil, appAppleId: nil, signedDate: 1743080927054, nested: []),
        .init(
            "38-loki-transaction.jws", .transaction, env: "Sandbox", bundle: "com.loki-project.loki-messenger", appAppleId: nil,
            signedDate: 1759302518835, nested: []),
        .init("39-loki-renewalinfo.jws", .renewalInfo, env: "Sandbox", bundle: nil, appAppleId: nil, signedDate: 1759302518835, nested: []),
        .init(
            "40-genius-transaction.jws", .transaction, env: "Sandbox", bundle: "GeniusParentingAI", appAppleId: nil,
            signedDate: 1753613033596, nested: []),
        .init(
            "41-genius-subscribed-resubscribe-intact.jws", .notification, env: "Sandbox", bundle: "GeniusParentingAI",
            appAppleId: 6747332178, signedDate: 1753765255211, nested: ["signedTransactionInfo", "signedRenewalInfo"]),
    ]

    /// A verifier set up for the row's app (built-in Apple Root CA - G3).
    static func verifier(for row: Row, time: TrustConfiguration.ValidationTime = .signedDate, now: Int64 = ms("2026-06-01T00:00:00Z"))
        throws -> AppStoreVerifier
    {
        try AppStoreVerifier(
            configuration: TrustConfiguration(
                bundleId: row.kind == .renewalInfo ? "any.bundle" : row.bundle,
                appAppleId: row.env == "Production" ? row.appAppleId : 1,
                environments: row.env.map { [$0] } ?? [],
                validationTime: time,
                clock: { now }))
    }

    @Test func tableCoversAll41() {
        #expect(Self.rows.count == 41)
        #expect(Self.rows.filter { $0.kind == .transaction }.count == 5)
        #expect(Self.rows.filter { $0.kind == .renewalInfo }.count == 3)
    }

    @Test(arguments: rows)
    func validAtSignedDate(_ row: Row) throws {
        let jws = try FixtureFiles.text("real/" + row.file)
        let report = try Self.verifier(for: row).verify(jws)
        #expect(report.isValid, "\(row.file): \(report.failure.map { "\($0)" } ?? "")")
        #expect(report.kind == row.kind)
        #expect(report.validationTime == row.signedDate)
        #expect(report.check("signature")?.status == .passed)
        #expect(report.check("chain")?.detail.contains("Apple Root CA - G3") == true)
        #expect(report.check("validity")?.detail.contains("at signedDate \(Timestamp.iso8601(row.signedDate))") == true)
        #expect(report.nested.map(\.member.rawValue) == row.nested)
        for (member, nested) in report.nested {
            #expect(nested.isValid, "\(row.file) \(member.rawValue)")
            #expect(nested.check("signature")?.status == .passed)
        }
        switch row.kind {
        case .notification:
            let model = try #require(report.notification)
            #expect(model.signedDate == row.signedDate)
            #expect(model.data?.bundleId == row.bundle)
            if row.nested.contains("signedTransactionInfo") {
                #expect(report.nestedTransaction?.bundleId == row.bundle)
            }
        case .transaction:
            #expect(report.transaction?.bundleId == row.bundle)
            #expect(report.transaction?.signedDate == row.signedDate)
        case .renewalInfo:
            #expect(report.renewalInfo?.signedDate == row.signedDate)
            #expect(report.check("bundle id")?.status == .skipped)
        default:
            Issue.record("unexpected kind")
        }
        // The decoded payload is the committed decoded JSON, field for field and in order.
        let expected = try JSONParser.parse(FixtureFiles.text("real/" + row.file.replacingOccurrences(of: ".jws", with: ".payload.json")))
        #expect(report.payload == expected)
    }

    @Test(arguments: rows)
    func oldLeavesFailAtNow(_ row: Row) throws {
        let jws = try FixtureFiles.text("real/" + row.file)
        let report = try Self.verifier(for: row, time: .now).verify(jws)
        if row.oldLeaf {
            #expect(!report.isValid)
            #expect(report.failure?.code == .certificateExpiredOrNotYetValid)
            #expect(report.check("chain")?.status == .passed)
            #expect(report.check("validity")?.detail.contains("at now 2026-06-01T00:00:00Z") == true)
        } else {
            #expect(report.isValid, "\(row.file): \(report.failure.map { "\($0)" } ?? "")")
        }
    }

    @Test func fixedTimeBeforeLeafIsRefused() throws {
        let row = Self.rows[2]
        let jws = try FixtureFiles.text("real/" + row.file)
        let report = try Self.verifier(for: row, time: .fixed(ms("2025-01-01T00:00:00Z"))).verify(jws)
        #expect(report.failure?.code == .certificateExpiredOrNotYetValid)
        #expect(report.failure?.message.contains("not yet valid") == true)
    }

    @Test func productionTestNotificationChecksAppAppleId() throws {
        let jws = try FixtureFiles.text("real/17-nineton-test-production.jws")
        let base = TrustConfiguration(bundleId: "com.nineton.taller", appAppleId: 6450284872, environments: ["Production", "Sandbox"])
        let ok = try AppStoreVerifier(configuration: base).verify(jws)
        #expect(ok.isValid)
        #expect(ok.check("app id")?.status == .passed)
        var wrong = base
        wrong.appAppleId = 6450284873
        #expect(try AppStoreVerifier(configuration: wrong).verify(jws).failure?.code == .invalidAppIdentifier)
        var sandboxOnly = base
        sandboxOnly.environments = ["Sandbox"]
        sandboxOnly.appAppleId = nil
        #expect(try AppStoreVerifier(configuration: sandboxOnly).verify(jws).failure?.code == .invalidEnvironment)
    }

    @Test func appAccountTokenAndLifecycleFields() throws {
        let jws = try FixtureFiles.text("real/03-loki-did-renew.jws")
        let report = try Self.verifier(for: Self.rows[2]).verify(jws)
        let tx = try #require(report.nestedTransaction)
        #expect(tx.originalTransactionId == "2000001024993299")
        #expect(tx.transactionReason?.rawValue == "RENEWAL")
        #expect(report.notification?.notificationType?.rawValue == "DID_RENEW")
        #expect(report.nestedRenewalInfo?.originalTransactionId == "2000001024993299")
    }

    @Test func wrongBundleIdIsRefused() throws {
        let jws = try FixtureFiles.text("real/03-loki-did-renew.jws")
        let verifier = try AppStoreVerifier(configuration: TrustConfiguration(bundleId: "com.example.other", environments: ["Sandbox"]))
        let report = verifier.verify(jws)
        #expect(report.failure?.code == .invalidAppIdentifier)
        #expect(report.check("signature")?.status == .passed)
    }

    @Test(arguments: [
        ("90-genius-subscribed-resubscribe-corrupted-signature.jws", VerificationFailure.Code.invalidSignature),
        ("91-apple-lib-test-signed-notification.jws", .untrustedChain),
        ("92-apple-lib-xcode-signed-transaction.jws", .invalidChainLength),
        ("93-derived-tampered-genius-test.jws", .invalidSignature),
    ])
    func mustBeRejected(_ file: String, _ code: VerificationFailure.Code) throws {
        let jws = try FixtureFiles.text("real/" + file)
        let verifier = try AppStoreVerifier(
            configuration: TrustConfiguration(appAppleId: 1, environments: ["Sandbox", "Production"]))
        let report = verifier.verify(jws)
        #expect(!report.isValid)
        #expect(report.failure?.code == code, "\(file): \(report.failure.map { "\($0)" } ?? "")")
        #expect(report.failure?.code.isMalformed == false)
        #expect(!(report.failure?.message.contains(jws) ?? true))
    }
}
