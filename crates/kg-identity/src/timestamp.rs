//! The expiry of an API key as written in `auth_api_keys`: an RFC 3339 timestamp or a date.
//! Parsed here rather than with a date crate: the two shapes are all we accept, and the
//! crate stays small for the Wasm components.

/// Unix seconds of `YYYY-MM-DD` (midnight UTC) or of an RFC 3339 timestamp
/// (`YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`; fractions are dropped).
pub(crate) fn parse_timestamp(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let date = b.get(..10)?;
    if date[4] != b'-' || date[7] != b'-' {
        return None;
    }
    let (year, month, day) = (
        digits(&date[..4])?,
        digits(&date[5..7])?,
        digits(&date[8..10])?,
    );
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let midnight = days_from_civil(year, month, day) * 86_400;
    let rest = &b[10..];
    if rest.is_empty() {
        return Some(midnight);
    }
    // `THH:MM:SS`
    if rest.len() < 9 || !matches!(rest[0], b'T' | b't') || rest[3] != b':' || rest[6] != b':' {
        return None;
    }
    let (h, m, s) = (
        digits(&rest[1..3])?,
        digits(&rest[4..6])?,
        digits(&rest[7..9])?,
    );
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    let mut zone = &rest[9..];
    if zone.first() == Some(&b'.') {
        let frac = zone[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if frac == 0 {
            return None;
        }
        zone = &zone[1 + frac..];
    }
    let offset = match zone {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), oh1, oh2, b':', om1, om2] => {
            let (oh, om) = (digits(&[*oh1, *oh2])?, digits(&[*om1, *om2])?);
            if oh > 23 || om > 59 {
                return None;
            }
            let seconds = oh * 3600 + om * 60;
            if *sign == b'+' { seconds } else { -seconds }
        }
        _ => return None,
    };
    Some(midnight + h * 3600 + m * 60 + s - offset)
}

fn digits(b: &[u8]) -> Option<i64> {
    b.iter().try_fold(0i64, |acc, c| {
        c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
    })
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(parse_timestamp("1970-01-01"), Some(0));
        assert_eq!(parse_timestamp("2027-01-01"), Some(1_798_761_600));
        assert_eq!(parse_timestamp("2027-01-01T00:00:00Z"), Some(1_798_761_600));
        assert_eq!(
            parse_timestamp("2027-01-01T02:00:00.123+02:00"),
            Some(1_798_761_600)
        );
        assert_eq!(
            parse_timestamp("2026-12-31T19:00:00-05:00"),
            Some(1_798_761_600)
        );
        assert_eq!(parse_timestamp("2024-02-29"), Some(1_709_164_800));
        for bad in [
            "2023-02-29",
            "2027-13-01",
            "2027-1-01",
            "2027-01-01T00:00:00",
            "2027-01-01T24:00:00Z",
            "2027-01-01T00:00Z",
            "2027-01-01T00:00:00.Z",
            "2027-01-01T00:00:00+0200",
            "27-01-01",
            "2027/01/01",
            "",
            "２０２７-01-01",
            "2027-01-01x",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }
}
