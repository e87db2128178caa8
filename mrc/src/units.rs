//! Parsing of human-friendly quantities on the command line: sizes
//! (`64KiB`, `2MB`, `4096`), durations (`50us`, `1.5ms`) and EV failures
//! (`3@50us`).

use proto::time::{Duration, Instant};

/// A command-line quantity that did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("'{0}' is not a size (examples: 4096, 64KiB, 2MB, 1GiB)")]
    Size(String),
    #[error("'{0}' is not a duration (examples: 50us, 1.5ms, 200ns, 2s)")]
    Duration(String),
    #[error("'{0}' is not an EV failure (expected INDEX@TIME, e.g. 3@50us)")]
    EvFailure(String),
    #[error("'{0}' is not an EV flap (expected INDEX@FROM/PERIOD/DOWN, e.g. 2@20us/40us/20us)")]
    EvFlap(String),
}

fn split_number(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

/// Bytes from `4096`, `64KiB`, `64K`, `2MB`, `1GiB` (K/M/G alone are binary,
/// as RDMA tools use them; `KB`/`MB`/`GB` are decimal).
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let err = || UnitError::Size(s.to_string());
    let (num, unit) = split_number(s.trim());
    let value: f64 = num.parse().map_err(|_| err())?;
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        _ => return Err(err()),
    };
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 || bytes.fract() != 0.0 {
        return Err(err());
    }
    Ok(bytes as u64)
}

/// A duration from `50us`, `1.5ms`, `200ns`, `10ps`, `2s`.
pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    let err = || UnitError::Duration(s.to_string());
    let (num, unit) = split_number(s.trim());
    let value: f64 = num.parse().map_err(|_| err())?;
    let ps_per_unit: f64 = match unit {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        _ => return Err(err()),
    };
    let ps = value * ps_per_unit;
    if !ps.is_finite() || ps < 0.0 || ps > u64::MAX as f64 {
        return Err(err());
    }
    Ok(Duration::from_ps(ps.round() as u64))
}

/// An EV failure `INDEX@TIME`: EV `INDEX` drops everything from `TIME` on.
pub fn parse_ev_failure(s: &str) -> Result<(u16, Instant), UnitError> {
    let err = || UnitError::EvFailure(s.to_string());
    let (idx, at) = s.split_once('@').ok_or_else(err)?;
    let idx: u16 = idx.trim().parse().map_err(|_| err())?;
    let at = parse_duration(at).map_err(|_| err())?;
    Ok((idx, Instant(at.as_ps())))
}

/// `I@FROM/PERIOD/DOWN`: EV index I flaps from FROM on, down for DOWN at
/// the start of every PERIOD.
pub fn parse_ev_flap(s: &str) -> Result<(u16, Instant, Duration, Duration), UnitError> {
    let err = || UnitError::EvFlap(s.to_string());
    let (idx, rest) = s.split_once('@').ok_or_else(err)?;
    let idx: u16 = idx.trim().parse().map_err(|_| err())?;
    let mut parts = rest.split('/');
    let mut next = || parse_duration(parts.next().ok_or_else(err)?).map_err(|_| err());
    let (from, period, down) = (next()?, next()?, next()?);
    if parts.next().is_some() {
        return Err(err());
    }
    Ok((idx, Instant(from.as_ps()), period, down))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64KiB"), Ok(65536));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("2MB"), Ok(2_000_000));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("0.3").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("50us"), Ok(Duration::from_us(50)));
        assert_eq!(parse_duration("1.5ms"), Ok(Duration::from_us(1500)));
        assert_eq!(parse_duration("200ns"), Ok(Duration::from_ns(200)));
        assert!(parse_duration("50").is_err());
        assert!(parse_duration("fast").is_err());
    }

    #[test]
    fn ev_failures() {
        assert_eq!(parse_ev_failure("3@50us"), Ok((3, Instant::from_us(50))));
        assert!(parse_ev_failure("3").is_err());
        assert!(parse_ev_failure("x@1us").is_err());
    }
}
