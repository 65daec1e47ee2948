//! API keys: hashing, the `auth_api_keys` entries, checking a key, and the minting script.
#![cfg(feature = "authn")] // These test authentication, which the feature gates.

use std::process::Command;

use kg_identity::{
    ApiKeyEntry, AuthError, AuthMethod, Role, authenticate_key, format_entry, hash_key,
    parse_entries,
};

const KEY: &str = "kga_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";

#[test]
fn hash_key_is_the_hex_sha256_of_the_whole_key() {
    // printf %s abc | sha256sum
    assert_eq!(
        hash_key("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    // printf %s kga_0123...EFG | sha256sum
    assert_eq!(
        hash_key(KEY),
        "8f0b8b9f4e36bea156c47d0ccea8c6ce767faa6b61a705d80c649613bdcdff1e"
    );
}

#[test]
fn entries_parse() {
    let h1 = hash_key("kga_first_key_aaaaaaaaaaaaaaaaaaaaaaaaa");
    let h2 = hash_key("kga_second_key_bbbbbbbbbbbbbbbbbbbbbbbb");
    let h3 = hash_key("kga_third_key_cccccccccccccccccccccccccc");
    let text = format!(
        " alice | operator, approver | {h1} ;\n\n;ci bot|viewer|{}|2027-01-01\r\nops|ADMIN,viewer,admin|{h3}|2027-01-01T02:00:00+02:00;",
        h2.to_uppercase()
    );
    let entries = parse_entries(&text).unwrap();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0].subject, "alice");
    assert_eq!(entries[0].roles, vec![Role::Operator, Role::Approver]);
    assert_eq!(entries[0].expires_unix, None);
    assert_eq!(entries[1].subject, "ci bot");
    assert_eq!(entries[1].expires_unix, Some(1_798_761_600));
    assert_eq!(entries[2].roles, vec![Role::Viewer, Role::Admin]);
    assert_eq!(entries[2].expires_unix, Some(1_798_761_600));
    assert_eq!(format!("{:02x}", entries[1].sha256[0]), h2[..2]);
    assert_eq!(parse_entries("").unwrap(), vec![]);
    assert_eq!(parse_entries(" ; \n ").unwrap(), vec![]);
}

#[test]
fn every_entry_error_names_the_entry() {
    let good = hash_key("kga_first_key_aaaaaaaaaaaaaaaaaaaaaaaaa");
    let other = hash_key("kga_other_key_aaaaaaaaaaaaaaaaaaaaaaaaa");
    let cases = [
        (good.clone(), "found 1 field"),
        (format!("a|viewer|{}", &good[..63]), "64 hex"),
        (format!("a|viewer|{}g", &good[..63]), "not hex"),
        (format!("a|viewer|{}é", &good[..62]), "not hex"),
        (format!("a|viwer|{good}"), "unknown role `viwer`"),
        (
            format!("a|viewer,superuser|{good}"),
            "unknown role `superuser`",
        ),
        (format!("a||{good}"), "no roles"),
        (format!("|viewer|{good}"), "subject is empty"),
        (format!("{}|viewer|{good}", "x".repeat(129)), "at most 128"),
        (format!("a\u{1}b|viewer|{good}"), "control"),
        (format!("a|viewer|{good}|2027-13-01"), "expiry"),
        (format!("a|viewer|{good}|tomorrow"), "expiry"),
        (format!("a|viewer|{good}|2027-01-01T00:00:00"), "expiry"),
        (format!("a|viewer|{good}|2027-01-01|extra"), "found 5 field"),
    ];
    for (entry, why) in &cases {
        // Entry 2, after a good one.
        let text = format!("b|viewer|{other};{entry}");
        let e = parse_entries(&text).unwrap_err();
        assert!(e.starts_with("auth_api_keys entry 2: "), "{entry}: {e}");
        assert!(e.contains(why), "{entry}: expected `{why}` in {e}");
    }
    let e = parse_entries(&format!(
        "a|viewer|{good}\nb|admin|{other}\nc|admin|{}",
        good.to_uppercase()
    ))
    .unwrap_err();
    assert_eq!(e, "auth_api_keys entry 3: the same key hash as entry 1");
    // 128 characters is fine, counted as characters.
    assert!(parse_entries(&format!("{}|viewer|{good}", "é".repeat(128))).is_ok());
}

#[test]
fn format_entry_writes_what_parse_entries_reads() {
    let hash = hash_key(KEY);
    let line = format_entry(
        "alice",
        &[Role::Operator, Role::Approver],
        &hash.to_uppercase(),
        None,
    );
    assert_eq!(line, format!("alice|operator,approver|{hash}"));
    let line = format_entry("bob", &[Role::Viewer], &hash, Some("2027-01-01"));
    assert_eq!(line, format!("bob|viewer|{hash}|2027-01-01"));
    let entry = &parse_entries(&line).unwrap()[0];
    assert_eq!(
        (entry.subject.as_str(), entry.expires_unix),
        ("bob", Some(1_798_761_600))
    );
}

fn entries() -> Vec<ApiKeyEntry> {
    parse_entries(&format!(
        "alice|operator|{};old|viewer|{}|2020-01-01;bob|admin|{}",
        hash_key(KEY),
        hash_key("kga_an_old_key_that_expired_long_ago"),
        hash_key("kga_bobs_key_bbbbbbbbbbbbbbbbbbbbbbbbbbb"),
    ))
    .unwrap()
}

#[test]
fn keys_are_checked_against_the_entries() {
    let now = 1_800_000_000;
    let identity = authenticate_key(KEY, &entries(), now).unwrap();
    assert_eq!(identity.subject, "alice");
    assert_eq!(identity.roles, vec![Role::Operator]);
    assert_eq!(identity.method, AuthMethod::ApiKey);
    assert_eq!(
        authenticate_key("kga_bobs_key_bbbbbbbbbbbbbbbbbbbbbbbbbbb", &entries(), now)
            .unwrap()
            .subject,
        "bob"
    );
    let refused = |key: &str, now: i64| match authenticate_key(key, &entries(), now) {
        Err(AuthError::InvalidToken(m)) => m,
        other => panic!("{key}: {other:?}"),
    };
    assert_eq!(
        refused("kga_an_old_key_that_expired_long_ago", now),
        "the API key expired"
    );
    assert_eq!(
        refused("kga_nobody_knows_this_key_at_all_xxxx", now),
        "unknown API key"
    );
    assert_eq!(refused(&KEY.replace('G', "H"), now), "unknown API key");
    // Expiry is at the instant given: valid the second before.
    let expires = entries()[1].expires_unix.unwrap();
    assert!(
        authenticate_key(
            "kga_an_old_key_that_expired_long_ago",
            &entries(),
            expires - 1
        )
        .is_ok()
    );
    assert_eq!(
        refused("kga_an_old_key_that_expired_long_ago", expires),
        "the API key expired"
    );
    // Malformed keys are not even hashed.
    for bad in [
        "kga_short",
        &format!("kga_{}", "a".repeat(197)),
        "kga_has.dot.in.it.aaaaaaaaa",
        "kgb_0123456789abcdefghijklmn",
        "kga_ümlaut_aaaaaaaaaaaaaaaaaaa",
    ] {
        assert_eq!(refused(bad, now), "malformed API key", "{bad}");
    }
    assert!(matches!(
        authenticate_key(KEY, &[], now),
        Err(AuthError::InvalidToken(_))
    ));
}

#[test]
fn the_minting_script_prints_a_key_and_its_entry() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let run = |args: &[&str]| {
        Command::new("bash")
            .arg("scripts/new-api-key.sh")
            .args(args)
            .current_dir(root)
            .output()
            .unwrap()
    };
    let out = run(&["alice", "operator,approver"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    let key = lines[0].strip_prefix("key:   ").unwrap();
    let entry = lines[1].strip_prefix("entry: ").unwrap();
    assert!(key.starts_with("kga_") && key.len() == 47, "{key}");
    assert_eq!(entry, format!("alice|operator,approver|{}", hash_key(key)));
    assert_eq!(
        lines[2],
        "Append the entry to the secret variable auth_api_keys (entries separated by ';'), e.g."
    );
    assert_eq!(
        lines[3],
        format!("  SPIN_VARIABLE_AUTH_API_KEYS='<existing>;{entry}'")
    );
    assert_eq!(
        lines[4],
        "The key itself is shown only now; the service stores only its SHA-256."
    );
    let entries = parse_entries(entry).unwrap();
    assert_eq!(
        authenticate_key(key, &entries, 0).unwrap().roles,
        vec![Role::Operator, Role::Approver]
    );

    // With an expiry.
    let out = run(&["ci-bot", "viewer", "2027-01-01"]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let entry = stdout
        .lines()
        .nth(1)
        .unwrap()
        .strip_prefix("entry: ")
        .unwrap();
    assert!(entry.ends_with("|2027-01-01"), "{entry}");
    assert_eq!(
        parse_entries(entry).unwrap()[0].expires_unix,
        Some(1_798_761_600)
    );

    // Usage errors exit 2.
    for args in [
        &["alice"][..],
        &["alice", "root"],
        &["", "viewer"],
        &["a|b", "viewer"],
        &["alice", "viewer", "soon"],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
}
