/// ISO-8601 UTC formatting and parsing for millisecond timestamps (own code: no DateFormatter).
public enum ISO8601 {
    /// `2025-09-05T01:24:32Z` for milliseconds since the Unix epoch (sub-second part dropped,
    /// rounding toward the past).
    public static func format(milliseconds: Int64) -> String {
        let (seconds, _) = floorDivide(milliseconds, 1000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civilDate(fromDays: days)
        let hour = secondOfDay / 3600
        let minute = secondOfDay % 3600 / 60
        let second = secondOfDay % 60
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))Z"
    }

    /// Milliseconds since the epoch for `2025-09-05`, `2025-09-05T01:24:32Z`,
    /// `2025-09-05T01:24:32.5+08:00` (a space may replace `T`; a time needs `Z` or an offset);
    /// nil if the text is not such a date.
    public static func parse(_ text: String) -> Int64? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.digits(4), scanner.take(UInt8(ascii: "-")),
            let month = scanner.digits(2), scanner.take(UInt8(ascii: "-")),
            let day = scanner.digits(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        let dayNumber = days(fromYear: year, month: month, day: day)
        if scanner.atEnd { return dayNumber * 86_400_000 }
        guard scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: "t")) || scanner.take(UInt8(ascii: " ")),
            let hour = scanner.digits(2), scanner.take(UInt8(ascii: ":")), let minute = scanner.digits(2),
            hour < 24, minute < 60
        else { return nil }
        var second: Int64 = 0
        var millisecond: Int64 = 0
        if scanner.take(UInt8(ascii: ":")) {
            guard let s = scanner.digits(2), s < 60 else { return nil }
            second = s
            if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
                var scale: Int64 = 100
                var count = 0
                while let digit = scanner.digit() {
                    millisecond += digit * scale
                    scale /= 10
                    count += 1
                }
                guard count > 0 else { return nil }
            }
        }
        var offsetSeconds: Int64 = 0
        if scanner.take(UInt8(ascii: "Z")) || scanner.take(UInt8(ascii: "z")) {
        } else if let sign = scanner.sign() {
            guard let offsetHour = scanner.digits(2), offsetHour <= 23 else { return nil }
            _ = scanner.take(UInt8(ascii: ":"))
            guard let offsetMinute = scanner.digits(2), offsetMinute < 60 else { return nil }
            offsetSeconds = sign * (offsetHour * 3600 + offsetMinute * 60)
        } else {
            return nil
        }
        guard scanner.atEnd else { return nil }
        let seconds = dayNumber * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return seconds * 1000 + millisecond
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        var atEnd: Bool { index == bytes.count }
        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        mutating func digit() -> Int64? {
            guard index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 else { return nil }
            index += 1
            return Int64(bytes[index - 1] - 48)
        }
        mutating func digits(_ count: Int) -> Int64? {
            var value: Int64 = 0
            for _ in 0..<count {
                guard let d = digit() else { return nil }
                value = value * 10 + d
            }
            return value
        }
        mutating func sign() -> Int64? {
            if take(UInt8(ascii: "+")) { return 1 }
            if take(UInt8(ascii: "-")) { return -1 }
            return nil
        }
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        var q = a / b
        var r = a % b
        if r < 0 {
            q -= 1
            r += b
        }
        return (q, r)
    }

    private static func isLeap(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
    private static func days(fromYear year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day number since 1970-01-01 (H. Hinnant's civil_from_days).
    private static func civilDate(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
