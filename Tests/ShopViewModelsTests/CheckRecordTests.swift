import Foundation
import ShopAPI
import Testing
@testable import ShopViewModels

/// A check record's check is a type, and its source follows from it: the watchdog's, a pin's, a
/// write's verification or the watch's; only a write's verification is not a finding.
@Suite struct CheckRecordTests {
    func record(_ check: CheckID) -> CheckRecord {
        CheckRecord(check: check, outcome: .failed, expected: "1", actual: "2", request: "GET /api/v1/balance", requestID: "rq-1", at: Date(timeIntervalSince1970: 0))
    }

    @Test func theSourceFollowsTheCheck() {
        let cases: [(CheckID, CheckSource, String, Bool)] = [
            (.contract(.schema), .watchdog, "schema", true),
            (.contract(.pinned), .pins, "pinned", true),
            (.write(.spendBalance), .writeVerification, "spend-balance", false),
            (.watch(.debitWithoutEntry), .watch, "debit-without-entry", true),
        ]
        for (check, source, name, isFinding) in cases {
            let r = record(check)
            #expect(r.source == source && r.name == name && r.isFinding == isFinding, "\(check)")
        }
    }
}
