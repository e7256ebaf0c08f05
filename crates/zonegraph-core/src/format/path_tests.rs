//! The JSON path of a parse error, against `serde_path_to_error`, the library that
//! [`super::parse`]'s small text scanner replaces: random zone files, each broken in one
//! random place (a value of the wrong type, an unknown field or a missing one), must get the
//! same path from both.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value, json};

use super::{ZoneFile, parse};

/// What a member of a zone file holds, as far as the format's types care.
#[derive(Clone, Copy, Debug)]
enum Ty {
    Str,
    OptStr,
    U8,
    U32,
    OptI32,
    I32,
    Bool,
    F64,
    Kind,
    Lock,
    /// `lock_data`: a map of anything.
    Data,
    Array(Item),
    OptArray(Item),
    Object(Item),
}

/// The typed things a zone file nests.
#[derive(Clone, Copy, Debug)]
enum Item {
    Zone,
    Region,
    Node,
    Content,
    Edge,
    Kind,
}

/// The members of an object, and which of them must be present.
fn members(item: Item) -> &'static [(&'static str, Ty, bool)] {
    use Ty::*;
    match item {
        Item::Zone => &[
            ("$schema", OptStr, false),
            ("format", U32, true),
            ("zone_id", Str, true),
            ("name", Str, true),
            ("tier", U8, true),
            ("min_level", U32, true),
            ("max_level", U32, true),
            ("regions", Array(Item::Region), false),
            ("allow_loops", Bool, false),
            ("nodes", OptArray(Item::Node), false),
            ("edges", OptArray(Item::Edge), false),
            ("room_kinds", OptArray(Item::Kind), false),
        ],
        Item::Region => &[
            ("region_id", Str, true),
            ("name", Str, true),
            ("order", U32, true),
        ],
        Item::Node => &[
            ("node_id", Str, true),
            ("kind", Kind, true),
            ("label", Str, false),
            ("is_entry", Bool, false),
            ("is_boss", Bool, false),
            ("region_id", Str, false),
            ("pos_x", OptI32, false),
            ("pos_y", OptI32, false),
            ("content", Object(Item::Content), false),
        ],
        Item::Content => &[
            ("encounter_override", Str, false),
            ("harvest_ref", Str, false),
            ("loot_bias", F64, false),
            ("narration", Str, false),
            ("allow_self_loop", Bool, false),
            ("grants_key", OptStr, false),
        ],
        Item::Edge => &[
            ("from_node", Str, true),
            ("to_node", Str, true),
            ("lock_kind", Lock, false),
            ("lock_data", Data, false),
            ("hint", Str, false),
            ("weight", I32, false),
        ],
        Item::Kind => &[],
    }
}

/// Values of the wrong type (or out of range, or an unknown variant) for `ty`.
fn wrong(ty: Ty) -> Vec<Value> {
    let any = [json!([1, "a"]), json!({"a": [1]}), json!([]), json!({})];
    let mut v = match ty {
        Ty::Str | Ty::OptStr => vec![json!(5), json!(true), json!(1.5)],
        Ty::U8 => vec![json!("3"), json!(-1), json!(1.5), json!(300), json!(null)],
        Ty::U32 => vec![json!("3"), json!(-1), json!(2.5), json!(5_000_000_000u64)],
        Ty::I32 | Ty::OptI32 => vec![json!("3"), json!(false), json!(0.5), json!(3e9)],
        Ty::Bool | Ty::F64 => vec![json!(1), json!("x"), json!(null)],
        // An enum written as an object names its variant by the key.
        Ty::Kind => vec![
            json!("dragon"),
            json!(3),
            json!(null),
            json!({"entry": 1}),
            json!({"boss": null}),
        ],
        Ty::Lock => vec![json!("unlocked"), json!(2)],
        Ty::Data | Ty::Array(_) | Ty::OptArray(_) | Ty::Object(_) => {
            vec![json!("x"), json!(3), json!(true)]
        }
    };
    match ty {
        // An object or array of the wrong kind.
        // A struct may also be written as an array of its fields, in order.
        Ty::Data | Ty::Object(_) => v.extend([json!([1, {"a": 2}]), json!([]), json!(["a"])]),
        Ty::Array(_) | Ty::OptArray(_) => v.extend([json!({"a": [1]}), json!({})]),
        _ => v.extend(any),
    }
    v
}

/// A place to break: a member or element holding `Ty`, or an object of `Item`.
#[derive(Debug)]
enum Site {
    Value(String, Ty),
    Object(String, Item),
}

/// Every place of `doc` (at JSON pointer `at`, of type `item`) that has a type.
fn sites(doc: &Value, at: &str, item: Item, out: &mut Vec<Site>) {
    out.push(Site::Object(at.to_string(), item));
    let Some(obj) = doc.as_object() else {
        return;
    };
    for &(key, ty, _) in members(item) {
        let Some(v) = obj.get(key) else {
            continue;
        };
        let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        out.push(Site::Value(here.clone(), ty));
        match ty {
            Ty::Object(inner) => sites(v, &here, inner, out),
            Ty::Array(inner) | Ty::OptArray(inner) => {
                for (i, e) in v.as_array().into_iter().flatten().enumerate() {
                    let el = format!("{here}/{i}");
                    match inner {
                        Item::Kind => out.push(Site::Value(el, Ty::Kind)),
                        _ => {
                            out.push(Site::Value(el.clone(), Ty::Object(inner)));
                            sites(e, &el, inner, out);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// How a document is broken.
#[derive(Clone, Debug)]
enum Break {
    WrongType(Index),
    UnknownField(String),
    MissingField(Index),
}

/// `doc` broken at its `site`-th place (or returned whole when that break does not apply).
fn broken(mut doc: Value, site: Index, how: &Break) -> Value {
    let mut all = Vec::new();
    sites(&doc, "", Item::Zone, &mut all);
    match (&all[site.index(all.len())], how) {
        (Site::Value(at, ty), Break::WrongType(which)) => {
            let choices = wrong(*ty);
            if let Some(v) = doc.pointer_mut(at) {
                *v = choices[which.index(choices.len())].clone();
            }
        }
        (Site::Object(at, item), Break::UnknownField(key)) => {
            let known = members(*item).iter().any(|m| m.0 == key);
            if let Some(Value::Object(obj)) = doc.pointer_mut(at)
                && !known
            {
                obj.insert(key.clone(), json!(1));
            }
        }
        (Site::Object(at, item), Break::MissingField(which)) => {
            let required: Vec<&str> = members(*item).iter().filter(|m| m.2).map(|m| m.0).collect();
            if let Some(Value::Object(obj)) = doc.pointer_mut(at)
                && !required.is_empty()
            {
                obj.remove(required[which.index(required.len())]);
            }
        }
        _ => {}
    }
    doc
}

/// Text with the characters a path scanner could trip on: quotes, backslashes, brackets,
/// commas, colons, and multi-byte characters (columns are bytes).
fn text() -> impl Strategy<Value = String> {
    r#"[a-z "\\{}\[\],:.é☃\n]{0,8}"#
}

fn ident() -> impl Strategy<Value = String> {
    "[a-z][a-z_]{0,6}"
}

/// Anything, for `lock_data`: nested arrays and objects the scanner must step over.
fn anything() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        (-1e3f64..1e3).prop_map(|x| json!(x)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map(ident(), inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn kind() -> impl Strategy<Value = Value> {
    prop::sample::select(&["entry", "boss", "fork", "rest_camp", "secret"][..])
        .prop_map(|k| json!(k))
}

/// An object of the members that are `Some`.
fn object(members: Vec<(&str, Option<Value>)>) -> Value {
    let mut m = Map::new();
    for (k, v) in members {
        if let Some(v) = v {
            m.insert(k.to_string(), v);
        }
    }
    Value::Object(m)
}

fn content() -> impl Strategy<Value = Value> {
    (
        proptest::option::of(text()),
        proptest::option::of(0.0f64..3.0),
        proptest::option::of(text()),
        proptest::option::of(any::<bool>()),
        proptest::option::of(proptest::option::of(ident())),
    )
        .prop_map(|(enc, bias, narration, self_loop, key)| {
            object(vec![
                ("encounter_override", enc.map(Value::String)),
                ("loot_bias", bias.map(|b| json!(b))),
                ("narration", narration.map(Value::String)),
                ("allow_self_loop", self_loop.map(Value::Bool)),
                ("grants_key", key.map(|k| json!(k))),
            ])
        })
}

fn node() -> impl Strategy<Value = Value> {
    (
        text(),
        kind(),
        proptest::option::of(text()),
        proptest::option::of(any::<bool>()),
        proptest::option::of(ident()),
        proptest::option::of(proptest::option::of(-5i32..5)),
        proptest::option::of(content()),
    )
        .prop_map(|(id, kind, label, entry, region, x, content)| {
            object(vec![
                ("node_id", Some(Value::String(id))),
                ("kind", Some(kind)),
                ("label", label.map(Value::String)),
                ("is_entry", entry.map(Value::Bool)),
                ("region_id", region.map(Value::String)),
                ("pos_x", x.map(|x| json!(x))),
                ("content", content),
            ])
        })
}

fn edge() -> impl Strategy<Value = Value> {
    (
        text(),
        text(),
        proptest::option::of(prop::sample::select(
            &["none", "key_required", "stat_check"][..],
        )),
        proptest::option::of(prop::collection::btree_map(ident(), anything(), 0..3)),
        proptest::option::of(text()),
        proptest::option::of(-3i32..9),
    )
        .prop_map(|(from, to, lock, data, hint, weight)| {
            object(vec![
                ("from_node", Some(Value::String(from))),
                ("to_node", Some(Value::String(to))),
                ("lock_kind", lock.map(|l| json!(l))),
                (
                    "lock_data",
                    data.map(|d| Value::Object(d.into_iter().collect())),
                ),
                ("hint", hint.map(Value::String)),
                ("weight", weight.map(|w| json!(w))),
            ])
        })
}

fn region() -> impl Strategy<Value = Value> {
    (ident(), text(), 1u32..4)
        .prop_map(|(id, name, order)| json!({"region_id": id, "name": name, "order": order}))
}

/// A zone file that reads: a graph, or a legacy list of room kinds.
fn zone() -> impl Strategy<Value = Value> {
    (
        (ident(), text(), 1u8..7, 1u32..5, 5u32..20),
        proptest::option::of(prop::collection::vec(region(), 0..3)),
        proptest::option::of(any::<bool>()),
        prop_oneof![
            (
                prop::collection::vec(node(), 0..4),
                prop::collection::vec(edge(), 0..4)
            )
                .prop_map(|(n, e)| (Some(n), Some(e), None)),
            prop::collection::vec(kind(), 0..4).prop_map(|k| (None, None, Some(k))),
        ],
        proptest::option::of(Just("zone.schema.json")),
    )
        .prop_map(
            |((id, name, tier, min, max), regions, loops, (nodes, edges, kinds), schema)| {
                object(vec![
                    ("$schema", schema.map(|s| json!(s))),
                    ("format", Some(json!(1))),
                    ("zone_id", Some(Value::String(id))),
                    ("name", Some(Value::String(name))),
                    ("tier", Some(json!(tier))),
                    ("min_level", Some(json!(min))),
                    ("max_level", Some(json!(max))),
                    ("regions", regions.map(Value::Array)),
                    ("allow_loops", loops.map(Value::Bool)),
                    ("nodes", nodes.map(Value::Array)),
                    ("edges", edges.map(Value::Array)),
                    ("room_kinds", kinds.map(Value::Array)),
                ])
            },
        )
}

fn a_break() -> impl Strategy<Value = Break> {
    prop_oneof![
        any::<Index>().prop_map(Break::WrongType),
        ident().prop_map(Break::UnknownField),
        any::<Index>().prop_map(Break::MissingField),
    ]
}

/// The paths `parse` and `serde_path_to_error` give `text`, when serde rejects it (the
/// library says `.` for the whole document, `parse` says nothing).
fn both_paths(text: &str) -> Option<(Option<String>, Option<String>)> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let reference = match serde_path_to_error::deserialize::<_, ZoneFile>(de) {
        Ok(_) => return None,
        Err(e) => Some(e.path().to_string()).filter(|p| p != "."),
    };
    let ours = parse(text).err().and_then(|e| e.path);
    Some((ours, reference))
}

/// `check(text, path)`: the shrunk failures, and the cases worth keeping in sight.
fn check(text: &str, expect: Option<&str>) {
    let (ours, reference) = both_paths(text).expect("the text is rejected");
    assert_eq!(
        reference.as_deref(),
        expect,
        "serde_path_to_error on {text}"
    );
    assert_eq!(ours.as_deref(), expect, "parse on {text}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn parse_error_path_is_serde_path_to_error(
        doc in zone(),
        site in any::<Index>(),
        how in a_break(),
        pretty in any::<bool>(),
    ) {
        let doc = broken(doc, site, &how);
        let text = if pretty {
            serde_json::to_string_pretty(&doc)
        } else {
            serde_json::to_string(&doc)
        }
        .expect("a Value serialises");
        if let Some((ours, reference)) = both_paths(&text) {
            prop_assert_eq!(ours, reference, "{}", text);
        }
    }
}

#[test]
fn paths_of_kept_cases() {
    check(r#"{"format":1,"tier":"x"}"#, Some("tier"));
    check(
        r#"{"format":1,"nodes":[{"kind":"entry","node_id":"a","lable":"x"}]}"#,
        Some("nodes[0].lable"),
    );
    check(r#"{"format":1}"#, None);
    // Found by the property: an enum written as an object names its variant by the key, and a
    // wrong one is the enum's error (the scanner used to add the key to the path).
    check(
        r#"{"format":1,"max_level":5,"min_level":1,"name":"","room_kinds":[{"a":[1]}],"tier":1,"zone_id":"a"}"#,
        Some("room_kinds[0]"),
    );
    check(
        r#"{"format":1,"nodes":[{"node_id":"a","kind":{"dragon":1}}]}"#,
        Some("nodes[0].kind"),
    );
    check(
        r#"{"format":1,"nodes":[{"node_id":"a","kind":{"entry":1}}]}"#,
        Some("nodes[0].kind.entry"),
    );
    // A struct may be written as an array of its fields.
    check(
        r#"{"format":1,"nodes":[{"node_id":"a","kind":"entry","content":["x",2]}]}"#,
        Some("nodes[0].content[1]"),
    );
}
