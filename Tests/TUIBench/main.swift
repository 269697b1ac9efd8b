// Frame build and diff benchmark (`make bench`): the History tab with 10,000 rows loaded and every
// entry's comments open, the selection moving one row per frame; each sample is Renderer.render plus
// Grid.diff against the frame before. One JSON line per size on stdout.
import Foundation
import ShopAPI
import ShopTUI
import ShopViewModels

let sizes = [(80, 24), (200, 60), (400, 100)]
let rows = Int(ProcessInfo.processInfo.environment["ROWS"] ?? "") ?? 10_000
let samples = Int(ProcessInfo.processInfo.environment["SAMPLES"] ?? "") ?? 2_000
let now = Date(timeIntervalSince1970: 1_795_305_600)

func loadedHistory(width: Int, height: Int) -> AppState {
    var state = AppState(context: ShopContext(environment: "staging", baseURL: "https://staging.invalid", user: "qa-whale"), historyPerPage: rows)
    _ = ShopUpdate.update(&state, .startWithCache(CachedShop()))
    if let token = state.token(for: .balance) { _ = ShopUpdate.update(&state, .answered(token, ShopReply(.balance(user: "qa-whale"), .success(.balance(CheerBalance(balance: 1_250))), sentAt: now))) }
    let comments = ProcessInfo.processInfo.environment["ASCII"] != nil ? [CheerComment(signature: "tomas", body: "Every night for three months; the loop points are invisible."), CheerComment(signature: nil, body: "fire"), CheerComment(signature: "minsu", body: "good")] : [CheerComment(signature: "tomás", body: "Every night for three months; the loop points are invisible. ありがとう！"),
                    CheerComment(signature: nil, body: "🔥🔥"), CheerComment(signature: "민수", body: "좋아요")]
    let items = (0..<rows).map { i in
        HistoryItem.entry(CheerHistoryEntry(id: "h-\(i)", creator: i % 3 == 0 ? "佐藤 健二" : "Field & Foley", amount: 5 + i % 50,
                                            product: "com.reiterate.pack.rain", date: now.addingTimeInterval(Double(-600 * i)), comments: comments))
    }
    let page = CheerHistoryPage(items: items, page: 1, perPage: rows, totalPages: 100, totalCount: rows * 100)
    if let token = state.token(for: .historyPage(1)) { _ = ShopUpdate.update(&state, .answered(token, ShopReply(.history(user: "qa-whale", page: 1, perPage: rows), .success(.history(page)), sentAt: now))) }
    _ = ShopUpdate.update(&state, .resize(width: width, height: height))
    _ = ShopUpdate.update(&state, .action(ProcessInfo.processInfo.environment["TAB"] == "requests" ? .requests : .history))
    // Every entry's comments open, then the selection in the middle: by the update, as keys and clicks would.
    for i in state.history.rows.indices {
        _ = ShopUpdate.update(&state, .select(i))
        _ = ShopUpdate.update(&state, .action(.toggle))
    }
    _ = ShopUpdate.update(&state, .select(rows / 2))
    return state
}

for (width, height) in sizes {
    var state = loadedHistory(width: width, height: height)
    let layouts = HistoryLayoutCache()  // the session's, as TerminalApp keeps it
    var previous = Renderer.render(Frame(app: state, now: now, timeZone: TimeZone(identifier: "UTC") ?? .current, layouts: layouts))
    var times: [Double] = []
    var changed = 0
    for i in 0..<(samples + 200) {
        _ = ShopUpdate.update(&state, .action(i % 40 < 20 ? .down : .up))
        let start = ContinuousClock.now
        let grid = Renderer.render(Frame(app: state, now: now, timeZone: TimeZone(identifier: "UTC") ?? .current, layouts: layouts))
        let runs = grid.diff(from: previous)
        let elapsed = ContinuousClock.now - start
        if i >= 200 {
            times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
            changed += runs.reduce(0) { $0 + $1.count }
        }
        previous = grid
    }
    times.sort()
    func percentile(_ p: Double) -> Double { times[min(times.count - 1, Int(Double(times.count) * p))] }
    let line = String(format: #"{"size":"%dx%d","p50_ms":%.4f,"p99_ms":%.4f,"samples":%d,"rows_loaded":%d,"cells_changed_per_frame":%d}"#,
                      width, height, percentile(0.5), percentile(0.99), times.count, rows, changed / max(1, times.count))
    print(line)
}
