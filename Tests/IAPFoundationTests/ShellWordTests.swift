import Testing

@testable import IAPFoundation

/// Text as one word of a shell command people copy: plain text as it is, anything else quoted.
@Suite("Shell words")
struct ShellWordTests {
    @Test func plainValuesStayAsTheyAreOthersAreQuoted() {
        #expect(ShellWord.word("2000000123456789") == "2000000123456789")
        #expect(ShellWord.word("mysql://iap@db:3306/iapctl") == "mysql://iap@db:3306/iapctl")
        #expect(ShellWord.word("sqlite:my db?") == "'sqlite:my db?'")
        #expect(ShellWord.word("a;rm -rf ~") == "'a;rm -rf ~'")
        #expect(ShellWord.word("it's") == #"'it'\''s'"#)
        #expect(ShellWord.word("") == "''")
        #expect(ShellWord.quoted("doctor: ok") == "'doctor: ok'")
    }
}
