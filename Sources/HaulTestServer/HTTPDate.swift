/// IMF-fixdate formatting (RFC 9110 §5.6.7) for Last-Modified.
///
/// The server's Last-Modified values are synthetic (a fixed instant plus one hour per content
/// version), so only formatting is needed; `If-Range` dates are compared as exact strings, which
/// is what RFC 9110 §13.1.5 asks for. Done by hand to keep Foundation out of the library.
enum HTTPDate {
    /// 2024-01-01T00:00:00Z: version 0's Last-Modified.
    static let baseEpochSeconds = 1_704_067_200

    /// The Last-Modified value for a content version.
    static func lastModified(version: Int) -> String {
        self.format(epochSeconds: self.baseEpochSeconds + version * 3600)
    }

    /// Formats seconds since 1970 as e.g. `Mon, 01 Jan 2024 00:00:00 GMT`.
    static func format(epochSeconds: Int) -> String {
        let days = Self.floorDivide(epochSeconds, 86_400)
        let secondsOfDay = epochSeconds - days * 86_400
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekday = weekdays[((days % 7) + 7 + 4) % 7]  // 1970-01-01 was a Thursday
        let (year, month, day) = Self.civil(fromDays: days)
        return "\(weekday), \(Self.pad(day)) \(months[month - 1]) \(year) "
            + "\(Self.pad(secondsOfDay / 3600)):\(Self.pad(secondsOfDay / 60 % 60)):\(Self.pad(secondsOfDay % 60)) GMT"
    }

    /// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = Self.floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func floorDivide(_ a: Int, _ b: Int) -> Int {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    private static func pad(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
