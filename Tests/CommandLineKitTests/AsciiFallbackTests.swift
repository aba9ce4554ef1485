import Testing

@testable import CommandLineKit

/// Which locales make iapctl write plain ASCII symbols: the first of LC_ALL, LC_CTYPE and LANG that
/// is set and not empty decides, and only a locale naming UTF-8 (either spelling, any case) keeps them.
@Suite("ASCII fallback: the locale decides")
struct AsciiFallbackTests {
    @Test(arguments: ["en_US.UTF-8", "C.utf8", "de_DE.utf-8@euro", "C.UTF8", "utf8", "UTF-8"])
    func aUTF8LocaleKeepsTheSymbols(locale: String) {
        #expect(!AsciiFallback.isNeeded(["LANG": locale]))
        #expect(!AsciiFallback.isNeeded(["LC_ALL": locale, "LANG": "C"]))
    }

    @Test(arguments: ["C", "POSIX", "en_US.ISO-8859-1", "en_US", "utf", "utf-", "tf-8", "ut f8", "u", "utf_8"])
    func anyOtherLocaleAsksForASCII(locale: String) {
        #expect(AsciiFallback.isNeeded(["LANG": locale]))
        #expect(AsciiFallback.isNeeded(["LC_CTYPE": locale, "LANG": "en_US.UTF-8"]))
    }

    @Test func theFirstSetVariableDecidesAndEmptyOnesAreSkipped() {
        #expect(!AsciiFallback.isNeeded([:]))
        #expect(!AsciiFallback.isNeeded(["LC_ALL": "", "LC_CTYPE": "", "LANG": ""]))
        #expect(AsciiFallback.isNeeded(["LC_ALL": "", "LC_CTYPE": "C", "LANG": "en_US.UTF-8"]))
        #expect(!AsciiFallback.isNeeded(["LC_ALL": "C.UTF-8", "LC_CTYPE": "C", "LANG": "C"]))
        #expect(!AsciiFallback.isNeeded(["LANGUAGE": "C", "LANG": "en_US.UTF-8"]))
    }
}
