import ArgumentParser
import Foundation
import JSONTokens
import Logging
import ShopAPI
import ShopCache
import ShopCompare
import ShopProbes
import ShopSettings
import ShopViewModels
import Synchronization
import TerminalText

/// `reiterate-shop pins`: the answers pinned in this environment (`P` on the Requests tab); `--add`
/// pins the current answer of a read, `--remove` takes a pin away.
struct PinsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pins",
        abstract: "List the answers pinned in this environment; --add pins a read's current answer, --remove takes a pin away.",
        discussion: """
            A pinned answer is compared with every later answer to the same request, under the ignore
            rules ([compare] ignore): a difference is a finding `pinned` in the Checks tab, and a warning
            line from `print`. Pins are kept per environment in $XDG_STATE_HOME/reiterate-shop/pins.
            """
    )

    @Option(help: "Pin the current answer of balance, packs or history (its first page) for the current user.") var add: String?
    @Option(help: "Take away a pin: its request line or its request id (as listed), or `all`.") var remove: String?
    @Flag(help: "The pins as JSON (the file's form).") var json = false
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if let add, ComparedPart(rawValue: add) == nil { throw ValidationError("--add takes balance, packs or history, not “\(add)”") }
        if add != nil, remove != nil { throw ValidationError("--add and --remove go one at a time") }
    }

    func run() async throws {
        let (settings, logger) = try connection.settingsAndLogger()
        guard let pins = connection.pins(settings) else {
            throw fail(CLIError(message: "[compare] ignore holds a rule that is not a path (`reiterate-shop config check` names it)", exitCode: .config))
        }
        if let unreadable = pins.unreadable { throw fail(CLIError(message: "the pins cannot be read: \(unreadable)", exitCode: .dataError)) }
        do {
            if let add {
                let read: RecordedRead? = try await connection.withClient(settings, logger: logger) { client in
                    let side = LiveSide(client: client, user: settings.user, environment: settings.environment, name: "", warn: { Terminal.err($0) })
                    switch ComparedPart(rawValue: add) {
                    case .balance?: return try await side.balance()
                    case .packs?: return try await side.packs()
                    default: return try await side.history(page: 1, perPage: 50)
                    }
                }
                guard let read, let body = read.body else { throw CLIError(message: "the answer is not JSON: nothing to pin", exitCode: .dataError) }
                guard let request = RequestKey(method: read.method, target: read.target) else {
                    throw CLIError(message: "the read's method is not the API's: nothing to pin", exitCode: .dataError)
                }
                let pin = Pin(request: request, body: body, requestID: read.requestID, pinnedAt: read.at ?? Date())
                try await pins.add(pin)
                Terminal.err("note: pinned \(Sanitizer.line(pin.request.description)) (request id \(Sanitizer.line(pin.requestID ?? "—"))) on \(settings.environment.uppercased())\n")
            } else if let remove {
                // The request line, or the request id the listing shows beside it.
                let listed = await pins.book.pins.first { $0.requestID == remove }?.request
                let request = remove == "all" ? nil : PinBook.key(remove) ?? listed
                guard remove == "all" || request != nil else {
                    throw CLIError(message: "“\(Sanitizer.line(remove))” is neither a request line such as “GET /api/v1/balance?user_id=qa-alice” nor the request id of a pin "
                                   + "(reiterate-shop pins lists both)", exitCode: .usage)
                }
                let gone = try await pins.remove(request)
                guard gone > 0 else { throw CLIError(message: "no pin of “\(remove)” on \(settings.environment.uppercased()) (reiterate-shop pins lists them)", exitCode: .usage) }
                Terminal.err("note: \(gone) pin\(gone == 1 ? "" : "s") taken away\n")
            } else {
                let book = await pins.book
                if json {
                    Terminal.out(String(decoding: book.encoded(), as: UTF8.self))
                } else if book.pins.isEmpty {
                    Terminal.out("No pins on \(settings.environment.uppercased()).\n")
                } else {
                    for pin in book.pins {
                        Terminal.out("\(Sanitizer.line(pin.request.description))  pinned \(DiffReport.stamp(pin.pinnedAt))  request id \(Sanitizer.line(pin.requestID ?? "—"))\n")
                    }
                }
            }
        } catch let error as CLIError {
            throw fail(error)
        } catch let error as ShopAPIError {
            throw fail(error, tokenVariable: settings.tokenEnv)
        } catch {
            throw fail(CLIError(message: "the pins could not be saved in \(pins.path ?? "the state folder")", exitCode: .config))
        }
    }
}
