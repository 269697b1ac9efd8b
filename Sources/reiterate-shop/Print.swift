import ArgumentParser
import Foundation
import JSONTokens
import Logging
import ShopAPI
import ShopProbes
import ShopCache
import ShopSettings
import ShopViewModels
import TerminalText

struct Print: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "print",
        abstract: "Print the balance, the Audio Packs or a page of cheer history, then exit.",
        discussion: """
            Exit status: 0 success; 75 the server failed and the cached balance was printed (with its age);
            1 the server answered with an error (or sign-in expired); 65 the answer could not be read;
            69 no answer (refused, DNS, TLS, timeout); 78 bad setting; 64 usage; 70 a failure of this program.
            """
    )

    enum What: String, ExpressibleByArgument, CaseIterable {
        case balance, packs, history
    }

    @Argument(help: "What to print: balance, packs or history.") var what: What
    @Option(help: "History page (1-based).") var page = 1
    @Option(name: .customLong("per-page"), help: "History entries per page (1–200; default 50, with --all 200).") var perPage: Int?
    @Flag(help: "History: every page, streamed newest first (in pages of 200); with --json, one JSON object a line.") var all = false
    @Option(help: "With --all: entries on or after this day (YYYY-MM-DD, local time); stops at the first older one.") var since: String?
    @Option(help: "With --all: entries on or before this day (YYYY-MM-DD, local time).") var until: String?
    @Option(help: "With --all: entries whose product, creator or comments hold this text (case and accents ignored).") var find: String?
    @Flag(help: "Print the decoded data as JSON (snake_case keys).") var json = false
    @Flag(help: "Exit 65 when a response deviated from the contract (each deviation is a `warning:` line on stderr either way).") var strict = false
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard page >= 1 else { throw ValidationError("--page must be 1 or more") }
        guard perPage.map({ (1...CheerHistory.maxPerPage).contains($0) }) ?? true else { throw ValidationError("--per-page must be 1–200") }
        if all || since != nil || until != nil || find != nil {
            guard what == .history else { throw ValidationError("--all, --since, --until and --find are for `print history`") }
            guard all else { throw ValidationError("--since, --until and --find go with --all") }
        }
        for (name, value) in [("--since", since), ("--until", until)] {
            if let value, HistoryStream.dayStart(value) == nil { throw ValidationError("\(name) takes a day as YYYY-MM-DD, not “\(value)”") }
        }
        if let find, find.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--find needs some text") }
    }

    func run() async throws {
        let (settings, logger) = try connection.settingsAndLogger()
        let output: String
        var findings = 0
        do {
            output = try await connection.withClient(settings, logger: logger) { client in
                do {
                    let text = try await produce(client, settings: settings, logger: logger)
                    findings = reportFindings(await client.exchangesWithPinsSettled(), lines: .standard)
                    return text
                } catch {
                    findings = reportFindings(await client.exchangesWithPinsSettled(), lines: .standard)  // the deviations still show
                    throw error
                }
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(error, tokenVariable: settings.tokenEnv)
        }
        if !output.isEmpty { Terminal.out(output) }
        if strict, findings > 0 { throw ExitCode(ExitStatus.dataError.rawValue) }
    }

    /// What `what` prints.
    func produce(_ client: ShopClient, settings: ResolvedSettings, logger: Logger) async throws -> String {
        let user = settings.user
        switch what {
        case .balance:
            return try await balance(client: client, settings: settings, logger: logger)
        case .packs:
            let list = try await client.send(AudioPacks())
            return json ? try Output.json(list) : Output.packs(list)
        case .history where all:
            var stream = HistoryStream(user: user, json: json, find: find,
                                       since: since.flatMap(HistoryStream.dayStart),
                                       until: until.flatMap(HistoryStream.dayAfter),
                                       lines: .standard)
            // Incomplete (pages served short the reading could not get past): said on the last line, and 69.
            guard try await stream.run(client, perPage: perPage ?? CheerHistory.maxPerPage) else { throw ExitCode(ExitStatus.unavailable.rawValue) }
            return ""
        case .history:
            let history = try await client.send(CheerHistory(user: user, page: page, perPage: perPage ?? 50))
            return json ? try Output.json(history) : Output.history(history, user: user)
        }
    }
}

extension Print {
    /// The balance through the view-model layer: the cache is read first, the live value replaces it
    /// and is cached; when the server fails, the cached value is printed with its age and the reason,
    /// and the exit status is 75 (EX_TEMPFAIL).
    func balance(client: ShopClient, settings: ResolvedSettings, logger: Logger) async throws -> String {
        let user = settings.user
        let context = settings.shopContext
        let cache = CacheStore(directory: connection.resolvedCacheDir, logger: logger)
        let store = await AppStore(state: AppState(context: context), service: LiveShopService(client: client), cache: cache)
        await store.send(.startBalance)
        await store.settle()
        let balance = await store.state.balance
        switch balance.phase {
        case let .live(value, _):
            return json ? try Output.json(BalanceOutput(balance: value, source: "live", fetchedAt: nil, reason: nil))
                : Output.balance(CheerBalance(balance: value), user: user)
        case let .cached(value, fetchedAt, reason):
            // The cache stands in for an outage only; a refusal (401, 403, 404…) is an answer to act on.
            // A number beyond 64 bits is the server's data at fault (65), not an outage.
            if let error = balance.error, !error.category.isOutage || error.isBeyond64Bits { throw error }
            let text = json
                ? try Output.json(BalanceOutput(balance: value, source: "cache", fetchedAt: ISO8601.format(fetchedAt), reason: reason?.full))
                : "\(Wording.grouped(value)) cheer  (\(Sanitizer.line(user))) · cached \(Wording.age(of: fetchedAt, now: Date())) · \(reason?.full ?? "offline")\n"
            if let error = balance.error {
                Terminal.err("warning: showing the cached balance: \(ErrorText.line(error))\n")
            }
            Terminal.out(text)
            throw ExitCode(ExitStatus.tempFail.rawValue)
        case .failed, .idle, .loading:
            throw balance.error ?? ShopAPIError.configuration(.unexpected)
        }
    }
}
