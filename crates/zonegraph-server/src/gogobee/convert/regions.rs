//! A zone's regions, read from gogobee's `ExpeditionRegion` lists.

use std::collections::BTreeMap;

use zonegraph_core::format::RegionFile;

use super::super::syntax::{Elem, Expr};
use super::expr::{composite, fields, quoted};
use super::{At, Consts, Errors};

/// `Zone: {{ID: …, Name: …, Order: …}, …}`: a zone's regions in order.
pub(super) fn region_list<'a>(
    key: &Expr,
    list: &[Elem],
    at: At<'a>,
    consts: &Consts,
    regions: &mut BTreeMap<String, Vec<(At<'a>, RegionFile)>>,
    errors: &mut Errors,
) {
    let zone = match consts.string(key) {
        Ok(z) => z,
        Err(msg) => {
            errors.push(
                At { pos: key.at, ..at },
                None,
                format!("cannot read which zone these regions belong to: {msg}"),
            );
            return;
        }
    };
    let z = Some(zone.as_str());
    let mut read = Vec::new();
    for el in list {
        let here = At {
            pos: el.value.at,
            ..at
        };
        let Some(elems) = composite(&el.value, "ExpeditionRegion", true) else {
            errors.push(
                here,
                z,
                format!(
                    "cannot read {} as an ExpeditionRegion{{…}}",
                    quoted(&el.value)
                ),
            );
            continue;
        };
        let Some(f) = fields(elems, "an ExpeditionRegion", here, z, errors) else {
            continue;
        };
        let get = |name: &str| f.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        let r = (|| -> Result<RegionFile, String> {
            let id = get("ID").ok_or("it sets no ID")?;
            let name = get("Name").ok_or("it sets no Name")?;
            let order = get("Order").ok_or("it sets no Order")?;
            let order = consts.int(order)?;
            Ok(RegionFile {
                region_id: consts.string(id)?,
                name: consts.string(name)?,
                order: u32::try_from(order).map_err(|_| format!("Order {order} is negative"))?,
            })
        })();
        match r {
            Ok(r) => read.push((here, r)),
            Err(msg) => errors.push(
                here,
                z,
                format!("cannot read a region of zone {zone}: {msg}"),
            ),
        }
    }
    let list = regions.entry(zone.clone()).or_default();
    if let Some((first, _)) = list.first() {
        errors.push(
            at,
            z,
            format!(
                "the regions of zone {zone} are given twice (also at {}:{})",
                first.file, first.pos.line
            ),
        );
    }
    list.extend(read);
}
