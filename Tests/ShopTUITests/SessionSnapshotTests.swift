import Foundation
import ShopAPI
import ShopProbes
import Testing
import TerminalText
@testable import ShopTUI
@testable import ShopViewModels

/// The Session tab (issue 46) as text and styles, from a record read back the way `session show` reads it:
/// findings by kind and blame, purchases with their verdicts, notes, coverage, the timeline; a subject the
/// server sent with an escape and a bidi control shows neither.
@Suite struct SessionSnapshotTests {
    /// A record as the journal writes it, at fixed times (the one in the tests of the record is written live).
    static let record: [UInt8] = Array("""
    {"at":"2026-11-21T14:00:00Z","command":"session start","kind":"start","meta":{"base_url":"https://staging.reiterate.invalid","build":"1.4.3 (42)","charter":"purchases after a refund","environment":"staging","id":"20261121-140000-refunds","name":"refunds","started_at":"2026-11-21T14:00:00Z","user":"qa-alice"},"pid":10}
    {"arguments":["buy","--bundle","com.reiterate.cheer.200","--yes"],"at":"2026-11-21T14:01:00Z","command":"buy","kind":"command","pid":11}
    {"at":"2026-11-21T14:01:01Z","command":"buy","entry":{"_requestId":"rq-b1","_source":"tool","cache":{},"request":{"bodySize":62,"cookies":[],"headers":[],"headersSize":-1,"httpVersion":"HTTP/1.1","method":"POST","postData":{"mimeType":"application/json","text":"{\\"identifier\\":\\"com.reiterate.cheer.200\\",\\"transaction_id\\":2000000000000001}"},"queryString":[],"url":"https://staging.reiterate.invalid/api/v2/purchase_cheer?user_id=qa-alice"},"response":{"bodySize":20,"content":{"mimeType":"application/json","size":20,"text":"{\\"balance\\":1450}"},"cookies":[],"headers":[],"headersSize":-1,"httpVersion":"HTTP/1.1","redirectURL":"","status":200,"statusText":"OK"},"startedDateTime":"2026-11-21T14:01:01Z","time":12,"timings":{"receive":0,"send":0,"wait":12}},"key":"11-1-1","kind":"exchange","pid":11}
    {"at":"2026-11-21T14:01:02Z","command":"buy","kind":"command-end","pid":11,"status":0}
    {"at":"2026-11-21T14:05:00Z","command":"negative","finding":{"actual":"200, the balance went from 1,450 to -3,551","blame":"server","caused_by":null,"expected":"a refusal (402)","kind":"refusal-expected","request_ids":["rq-n1"],"subject":"negative overspend \\u001b[31m\\u202eevil"},"kind":"finding","pid":12}
    {"at":"2026-11-21T14:06:00Z","command":"ledger","kind":"verdict","pid":13,"request_ids":["rq-b1"],"text":"com.reiterate.cheer.200","transaction":"2000000000000001","verdict":"credited"}
    {"at":"2026-11-21T14:07:00Z","command":"note","kind":"note","pid":14,"text":"the app showed 1,450 before the refund"}

    """.utf8)

    @Test func theSessionTabShowsTheSessionAsShowSaysIt() throws {
        let record = SessionRecord.read(Self.record)
        let summary = SessionSummary(record, now: Date(timeIntervalSince1970: 1_795_276_800 + 600), running: { _ in false })
        var app = loadedState()
        app.session.available = true
        _ = ShopUpdate.update(&app, .sessionRead(SessionRead(view: summary.tabView)))
        app.screen.tab = .session
        for (w, h) in [(80, 24), (120, 40)] {
            let grid = Renderer.render(frame(app, width: w, height: h))
            assertSnapshot(grid, "session-\(w)x\(h)")
            #expect(!grid.text.contains("\u{1B}") && !grid.text.contains("\u{202E}"))
        }
        let text = Renderer.render(frame(app, width: 120, height: 40)).text
        #expect(text.contains("findings: 1 · checks passed: 0") && text.contains("2000000000000001 com.reiterate.cheer.200: credited — buy posted → 200 rq-b1"))
        #expect(text.contains("refunds · 1 finding · open"))
    }

    @Test func withNoSessionOpenTheTabSaysHowToOpenOne() {
        var app = loadedState()
        app.session.available = true
        _ = ShopUpdate.update(&app, .sessionRead(SessionRead(view: nil)))
        app.screen.tab = .session
        let grid = Renderer.render(frame(app, width: 80, height: 24))
        assertSnapshot(grid, "session-none-80x24")
        #expect(grid.text.contains("No test session is open.") && grid.text.contains("N opens one"))
    }
}
