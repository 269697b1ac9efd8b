import Foundation
import Testing
@testable import ShopAPI

/// Issue 36: one value per write. Its body is the one encoder (the tool's spend and purchase, a
/// transaction id sent as typed included); the app's body read back is the one decoder; "this spend is
/// that entry" is asked of it alone.
@Suite struct ShopWriteTests {
    func text(_ write: ShopWrite) -> String { String(decoding: write.body, as: UTF8.self) }

    @Test func theBodyIsTheContractsFieldsWithSortedKeys() {
        #expect(text(.spend(product: "com.reiterate.pack.rain", amount: 25, comment: "Lovely 🌧")) == #"{"amount":25,"comment":"Lovely 🌧","product":"com.reiterate.pack.rain"}"#)
        #expect(text(.spend(product: "p", amount: 1)) == #"{"amount":1,"product":"p"}"#)
        #expect(text(.spend(product: "p\"q", amount: 1, comment: "a\nb\\")) == #"{"amount":1,"comment":"a\nb\\","product":"p\"q"}"#)
        #expect(text(.purchase(identifier: "com.reiterate.cheer.200", transactionID: .number(.max))) == #"{"identifier":"com.reiterate.cheer.200","transaction_id":18446744073709551615}"#)
        // Sent as typed: a number out of range as a number, text as a string.
        #expect(text(.purchase(identifier: "i", transactionID: .outOfRange("-5"))) == #"{"identifier":"i","transaction_id":-5}"#)
        #expect(text(.purchase(identifier: "i", transactionID: .text("4\"2"))) == #"{"identifier":"i","transaction_id":"4\"2"}"#)
        // The endpoint types send exactly it.
        #expect((try? SpendCheer(amount: 3, product: "p", comment: "c").body()) == ShopWrite.spend(product: "p", amount: 3, comment: "c").body)
        #expect((try? PurchaseCheer(identifier: "i", transactionID: 7).body()) == ShopWrite.purchase(identifier: "i", transactionID: 7).body)
    }

    @Test func aBodyReadBackIsTheWriteThatMadeIt() {
        let writes: [ShopWrite] = [
            .spend(product: "com.reiterate.pack.rain", amount: 7, comment: "great pack"), .spend(product: "p", amount: 1),
            .purchase(identifier: "com.reiterate.cheer.200", transactionID: .number(.max)), .purchase(identifier: "i", transactionID: 42),
            .purchase(identifier: "i", transactionID: .text("abc")), .purchase(identifier: "i", transactionID: .outOfRange("-5")),
            .purchase(identifier: "i", transactionID: .outOfRange("18446744073709551616")),
        ]
        for write in writes { #expect(ShopWrite(operation: write.operation, body: write.body) == write, "\(write)") }
        // Not a write, or a body that lacks what the write needs: nothing.
        #expect(ShopWrite(operation: .getBalance, body: Array(#"{"amount":1,"product":"p"}"#.utf8)) == nil)
        #expect(ShopWrite(operation: nil, body: Array(#"{"amount":1,"product":"p"}"#.utf8)) == nil)
        #expect(ShopWrite(operation: .spendCheer, body: Array(#"{"amount":"1","product":"p"}"#.utf8)) == nil)
        #expect(ShopWrite(operation: .purchaseCheer, body: Array(#"{"transaction_id":1}"#.utf8)) == nil)
        // A nested key of the same name is not the transaction id.
        #expect(ShopWrite(operation: .purchaseCheer, body: Array(#"{"identifier":"i","transaction_id":5,"receipt":{"transaction_id":9}}"#.utf8))
                == .purchase(identifier: "i", transactionID: 5))
        // A transaction id given twice: the last, as a JSON reader keeps it.
        #expect(ShopWrite(operation: .purchaseCheer, body: Array(#"{"identifier":"i","transaction_id":1,"transaction_id":18446744073709551615}"#.utf8))
                == .purchase(identifier: "i", transactionID: .number(.max)))
    }

    @Test func aSpendExplainsItsEntryAndNoOther() {
        let entry = CheerHistoryEntry(id: "h1", creator: "c", amount: 7, product: "rain", date: Date(), comments: [CheerComment(signature: "qa", body: "great")])
        #expect(ShopWrite.Spend(product: "rain", amount: 7, comment: "great").explains(entry))
        #expect(ShopWrite.Spend(product: "rain", amount: 7).explains(entry) && ShopWrite.Spend(product: "rain", amount: 7, comment: "").explains(entry))
        #expect(!ShopWrite.Spend(product: "rain", amount: 7, comment: "other").explains(entry))
        #expect(!ShopWrite.Spend(product: "rain", amount: 8).explains(entry) && !ShopWrite.Spend(product: "cafe", amount: 7).explains(entry))
    }

    @Test func twoIdsNameOneTransactionAsAServerReadsThem() {
        #expect(TransactionID.number(42).sameTransaction(as: .text("42")) && TransactionID.text("42").sameTransaction(as: 42))
        #expect(!TransactionID.number(42).sameTransaction(as: .text("042")) && !TransactionID.text("x").sameTransaction(as: .outOfRange("x")))
        #expect(!TransactionID.outOfRange("-5").sameTransaction(as: .text("-5")))
        #expect(TransactionID(typed: "\"42\"") == .text("42") && TransactionID(typed: " 42 ") == 42 && TransactionID(typed: "-5") == .outOfRange("-5"))
        // Sent as a number only when it is a JSON number: `-007` goes as text (never invalid JSON).
        #expect(TransactionID(typed: "007") == 7 && TransactionID(typed: "-007") == .text("-007") && TransactionID(typed: "0184467440737095516150") == .text("0184467440737095516150"))
    }
}
