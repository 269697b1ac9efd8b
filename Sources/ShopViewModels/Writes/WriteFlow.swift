import Foundation
import ShopAPI
import ShopModel
import ShopLedger

/// A spend or purchase, from its form through its answer to its verified outcome: one value
/// (`state.write`), changed only by the update. Its request is the in-flight table's `.write`;
/// whether its dialog has the keys is the screen's focus (`.dialog`).
public struct WriteFlow: Equatable, Sendable {
    /// The write's dialog: its form, confirmation, sending or answer. Nil when there is none; kept
    /// while the request is out even when the dialog is put away.
    public internal(set) var action: ActionState?
    /// What was known when the write in flight was sent (its verification compares against it): held
    /// by the pending phase alone.
    var before: Verification.Before? { if case let .pending(_, _, before)? = action?.phase { before } else { nil } }
    /// The write being verified, while its reads are out.
    public internal(set) var verification: Verification?
    /// The newest exchange the inspector held when the last write was sent. The write's own
    /// exchanges are the spends and purchases recorded after it (one write is out at a time; the log
    /// numbers exchanges in order): a bug report attaches those, never an older write's.
    public internal(set) var sentAfter: Int?
    /// The last write's error, when its answer was one (its outcome holds it).
    public var lastError: ShopAPIError? { outcome?.error }
    /// How the last write ended, once its reads came back (`spend`/`buy` read their output and exit
    /// status from it).
    public internal(set) var outcome: WriteOutcome?
    /// A purchase whose answer was lost (its transaction id is offered again).
    public internal(set) var lostPurchase: ShopWrite.Purchase?
    /// The user's states as this machine came to know them, write after write (read from the cache at
    /// start, written back after each write): what a read is judged against.
    public internal(set) var timeline = Timeline()
    /// What the baseline's reads found of their own (a stale read), until the write's outcome holds it.
    var baselineFindings: [CheckRecord] = []

    public init() {}

    /// What the write's dialog says once it is answered: its outcome's words when its reads have come
    /// back (held by the outcome alone), else the answer's own (the phase's, "Checking…").
    public var shownOutcome: (text: String, succeeded: Bool, requestID: String?)? {
        switch action?.phase {
        case .succeeded?, .failed?:
            if let outcome, verification == nil { return (outcome.text, outcome.succeeded, outcome.requestID) }
            if case let .succeeded(text)? = action?.phase { return (text, true, nil) }
            if case let .failed(text, id)? = action?.phase { return (text, false, id) }
            return nil
        default:
            return nil
        }
    }

    /// The dialog's title once answered: "Checking" while the reads after the write are out, "Done" when it
    /// was applied and every check passed, "Refused as expected", "Already credited" or "Refused" when
    /// it was refused with nothing changed and every check passed (a 409 that was expected is no failure),
    /// else "Failed".
    public var shownTitle: String {
        if verification != nil { return "Checking" }
        if shownOutcome?.succeeded == true { return "Done" }
        switch outcome?.refusal {
        case .expected?: return "Refused as expected"
        case .alreadyDone?: return "Already credited"
        case .refused?: return "Refused"
        case nil: return "Failed"
        }
    }
}

/// A spend or purchase's dialog, from its form through confirmation to its outcome.
public struct ActionState: Equatable, Sendable {
    /// The form as typed: which write it makes (its operation), and its fields' text in the form's order
    /// (`WriteForm.fields`). Submitted, it becomes a `ShopWrite` (`submit`), or a problem under it.
    public struct Form: Equatable, Sendable {
        public var operation: OperationID
        /// A spend's amount, comment and product (the product's field shown only when sent as typed); a
        /// purchase's bundle and transaction id.
        public var text: [String]
        /// A spend's pack as the list names it (the selected one).
        public var packName: String?

        /// A spend's form on `pack` (its identifier is the product field).
        public static func spend(on identifier: String, named name: String, amount: String = "", comment: String = "") -> Form {
            Form(operation: SpendCheer.endpoint.operation, text: [amount, comment, identifier], packName: name)
        }

        public static func purchase(identifier: String, transactionID: String) -> Form {
            Form(operation: PurchaseCheer.endpoint.operation, text: [identifier, transactionID], packName: nil)
        }

        public var isSpend: Bool { operation == SpendCheer.endpoint.operation }
        /// The fields' labels, in the form's order.
        public var labels: [String] { isSpend ? ["Amount", "Comment", "Product"] : ["Bundle", "Transaction"] }
        /// Field `i`'s text ("" past the last).
        public subscript(_ i: Int) -> String {
            get { text.indices.contains(i) ? text[i] : "" }
            set { if text.indices.contains(i) { text[i] = newValue } }
        }
    }

    /// A line under a form: a value it refuses, or something kept for the user (a lost purchase's id).
    public enum FormNote: Equatable, Sendable {
        case problem(String)
        case kept(String)
        /// Something read before the form goes on (the App Store's record of its transaction).
        case reading(String)

        /// `Reading the App Store's record of transaction 2000000000000042…`.
        static func readingRecord(_ id: String) -> FormNote { .reading("Reading the App Store's record of transaction \(id)…") }
    }

    public enum Phase: Equatable, Sendable {
        case editing(Form, note: FormNote?)
        /// "Spend 50 cheer on Rain on a Tin Roof as qa-alice on STAGING?"
        case confirming(ShopWrite, summary: String)
        /// Sent (its request is the table's `.write`), with what was known when it was sent.
        case pending(ShopWrite, summary: String, before: Verification.Before)
        case succeeded(String)
        case failed(String, requestID: String?)

        /// The keys' context while the dialog is shown in this phase.
        var mode: Mode {
            switch self {
            case .editing: return .form
            case .confirming: return .confirm
            case .pending: return .sending
            case .succeeded, .failed: return .outcome
            }
        }
    }

    public var phase: Phase
    /// The form field that has the cursor (0, 1, or 2: a spend sent as typed's product).
    public var field = 0
    /// "Send as typed" (a negative test): the client's own input checks are off for this one write,
    /// until it is sent or the form is closed. Never in a read-only environment.
    public var asTyped = false
    /// The App Store's record of a purchase form's transaction, once read (the form's expectation and
    /// credit come from it); `readingRecord`: the transaction whose record is being read.
    public var record: AppStoreRecordRead?
    public var readingRecord: String?
    /// The transaction id this tool made up for the buy form (`.transactionIDMade`): said so while the field holds it.
    public var madeTransactionID: String?

    /// The buy form's transaction field holds the id this tool made up (no App Store purchase has it).
    public var transactionIsMadeUp: Bool {
        guard case let .editing(form, _) = phase, !form.isSpend, let made = madeTransactionID else { return false }
        return form[1] == made
    }

    public init(phase: Phase, asTyped: Bool = false) {
        self.phase = phase
        self.asTyped = asTyped
    }
}

extension AppState {
    /// The write's dialog is on screen and has the keys.
    public var dialogShown: Bool { screen.focus == .dialog && write.action != nil }

    /// Shows `action` as the dialog (it takes the keys).
    mutating func openDialog(_ action: ActionState) {
        write.action = action
        screen.focus = .dialog
    }

    /// Closes the dialog; with it goes the write's state on screen (a write out keeps none).
    mutating func closeDialog() {
        write.action = nil
        if screen.focus == .dialog { screen.focus = .browse }
    }
}
