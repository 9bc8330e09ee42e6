//! `whirlpool-c` is `stock` on the table-driven model, and `whirlpool` is
//! not: against PBBCache's own `whirlpool-c` and `whirlpool` rows of
//! `ref/tidy_results.csv` (PBBCache has no `stock`; its unpartitioned
//! baselines are these two).

use cachepart::profile::{round3, BwModel, Evaluation, MetricsTable, Mix, ModelConfig};
use cachepart::Kind as _;
use cachepart::{Algorithm, RunOptions};
use cachepart_testkit::pbbcache::{load_reference, RefRow};

/// Whether `ev` gives the reference's STP, ANTT, unfairness and every
/// app's slowdown (within print rounding, as the parity test).
fn same_as(ev: &Evaluation, rows: &[RefRow]) -> bool {
    let close = |a: f64, b: f64| (a - b).abs() <= 6e-6 * b.abs().max(1.0);
    round3(ev.metrics.stp) == rows[0].stp
        && close(ev.metrics.antt, rows[0].antt)
        && close(ev.metrics.unfairness, rows[0].unfairness)
        && ev
            .apps
            .iter()
            .zip(rows)
            .all(|(a, r)| close(a.slowdown, r.slowdown) && close(a.slowdown_nobw, r.slowdown_nobw))
}

#[test]
fn stock_gives_pbbcaches_whirlpool_c_not_its_whirlpool() {
    let Some(dir) = cachepart_testkit::pbbcache_dir("stock_gives_pbbcaches_whirlpool_c") else {
        return;
    };
    let table = MetricsTable::from_path(&dir.join("metrics.csv")).unwrap();
    let (groups, tags) = load_reference(&dir.join("ref/tidy_results.csv"));
    let (mut like_c, mut like_i, mut compared) = (0, 0, 0);
    for ((tag, set, wid, alg), rows) in &groups {
        if alg != "whirlpool-c" {
            continue;
        }
        let key = (
            tag.clone(),
            set.clone(),
            wid.clone(),
            "whirlpool".to_string(),
        );
        let mpki_rows = &groups[&key];
        let (bw, maxbw) = &tags[tag];
        let opts = RunOptions {
            model: ModelConfig {
                bw_model: BwModel::from_name(bw).expect("bw model"),
                max_bw_mbps: Some(*maxbw),
            },
            ..Default::default()
        };
        let idx: Vec<usize> = rows
            .iter()
            .map(|r| table.app_index(&r.app).unwrap())
            .collect();
        let mix = Mix::from_table(&table, &idx);
        let stock = cachepart::run_one(wid, &mix, Algorithm::Stock, &opts).unwrap();
        let c = cachepart::run_one(wid, &mix, Algorithm::WhirlpoolC, &opts).unwrap();
        // The same plan, so the same evaluation, bit for bit.
        assert_eq!(stock.plan, c.plan, "{tag}/{set}/{wid}");
        assert_eq!(
            format!("{:?}", stock.evaluation),
            format!("{:?}", c.evaluation),
            "{tag}/{set}/{wid}"
        );
        like_c += usize::from(same_as(&stock.evaluation, rows));
        like_i += usize::from(same_as(&stock.evaluation, mpki_rows));
        compared += 1;
    }
    eprintln!(
        "stock = PBBCache's whirlpool-c on {like_c} of {compared} mixes, \
         = its whirlpool on {like_i}"
    );
    assert_eq!(compared, 22, "22 whirlpool-c groups in the reference");
    assert_eq!(like_c, compared);
    assert_eq!(like_i, 0);
}
