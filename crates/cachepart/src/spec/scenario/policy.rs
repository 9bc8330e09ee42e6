//! The scenario's CAT policy: its `policy` key parsed into an
//! [`Algorithm`] the simulator can run (no exact solver; `user` with a
//! `plan`), and the sections that only one policy reads (`lfoc-preset`,
//! `[ucp-online]`, `[dunn-dynamic]`, `[kpart-dynaway]`, `[lfoc-online]`,
//! `[throttle-online]`)
//! refused under another.

use cachepart_sim::system::PlatformConfig;

use super::{FieldError, ScenarioFile};
use crate::error::Error;
use crate::registry::Algorithm;

/// The policy of `file`, if it names one.
pub(super) fn parse(file: &ScenarioFile, err: FieldError<'_>) -> Result<Option<Algorithm>, Error> {
    let policy = match &file.policy {
        None => None,
        Some(p) => {
            let a: Algorithm = p
                .parse()
                .map_err(|e: Error| err("policy".into(), e.to_string()))?;
            if a.is_optimal() {
                return Err(err(
                    "policy".into(),
                    format!("{a} is an exact solver of the table-driven model; the simulator runs policies (stock, ucp, kpart, lfoc, dunn, ...)"),
                ));
            }
            if a == Algorithm::User && file.plan.is_none() {
                return Err(err(
                    "plan".into(),
                    "the user policy needs plan = \"MASK=APPS;...\"".into(),
                ));
            }
            Some(a)
        }
    };
    if file.plan.is_some() && policy != Some(Algorithm::User) {
        return Err(err(
            "plan".into(),
            format!(
                "is for policy = \"user\"; {}",
                match &file.policy {
                    None => "this scenario has no policy".to_string(),
                    Some(p) => format!("this scenario's policy is {p:?}"),
                }
            ),
        ));
    }
    if file.lfoc_preset.is_some()
        && !matches!(
            policy,
            Some(Algorithm::Lfoc | Algorithm::LfocPlus | Algorithm::LfocOnline)
        )
    {
        return Err(err(
            "lfoc-preset".into(),
            "is for policy = \"lfoc\", \"lfoc+\" or \"lfoc-online\"; this scenario's policy is another".into(),
        ));
    }
    // Each online controller's section, under another policy.
    let sections = [
        (file.ucp_online.is_some(), Algorithm::UcpOnline),
        (file.dunn_dynamic.is_some(), Algorithm::DunnDynamic),
        (file.kpart_dynaway.is_some(), Algorithm::KpartDynaway),
        (file.lfoc_online.is_some(), Algorithm::LfocOnline),
        (file.throttle_online.is_some(), Algorithm::ThrottleOnline),
    ];
    for (given, owner) in sections {
        if given && policy != Some(owner) {
            return Err(err(
                owner.to_string(),
                format!("is for policy = \"{owner}\"; this scenario's policy is another"),
            ));
        }
    }
    Ok(policy)
}

/// Checks the `user` policy's `plan` against the apps of `file` (by
/// position or name) and `platform`'s mask rules, so that a bad plan is
/// refused at load time naming the file and the key.
pub(super) fn check_plan(
    file: &ScenarioFile,
    platform: &PlatformConfig,
    err: FieldError<'_>,
) -> Result<(), Error> {
    let Some(text) = &file.plan else {
        return Ok(());
    };
    let names: Vec<String> = file.apps.iter().map(|a| a.name.clone()).collect();
    let plan = cachepart_policy::parse_plan(text, &names)
        .map_err(|e| err("plan".into(), e.to_string()))?;
    plan.validate(names.len(), &platform.mask_rules())
        .map_err(|e| err("plan".into(), format!("user plan {text:?}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{tmp, write, APP, GEN};
    use super::super::Scenario;

    #[test]
    fn a_plan_is_for_the_user_policy_and_checked_at_load_time() {
        let dir = tmp("plan");
        let d = dir.path();
        write(d, "light.toml", GEN);
        let apps = "[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n[[app]]\nname=\"b\"\ngenerator=\"light.toml\"\n";
        let load = |name: &str, keys: &str| {
            let p = write(d, name, &format!("platform = \"xeon-e5506\"\n{keys}{apps}"));
            Scenario::load(&p).map_err(|e| e.to_string())
        };
        load("ok.toml", "policy = \"user\"\nplan = \"0xff00=0;0xff=b\"\n").unwrap();
        for (i, (keys, want)) in [
            (
                "plan = \"0x3=0,1\"\n",
                "plan: is for policy = \"user\"; this scenario has no policy",
            ),
            (
                "policy = \"ucp\"\nplan = \"0x3=0,1\"\n",
                "plan: is for policy = \"user\"; this scenario's policy is \"ucp\"",
            ),
            (
                "policy = \"user\"\nplan = \"0x5=0;0xa=1\"\n",
                "plan: user plan \"0x5=0;0xa=1\": ",
            ),
            (
                "policy = \"user\"\nplan = \"0x3=0;0xc=x\"\n",
                "plan: user plan \"0x3=0;0xc=x\": cluster 1: \"x\" is not a program",
            ),
        ]
        .iter()
        .enumerate()
        {
            let e = load(&format!("s{i}.toml"), keys).unwrap_err();
            assert!(e.contains(&format!("s{i}.toml: {want}")), "{e}");
        }
    }

    #[test]
    fn a_policy_s_section_is_refused_under_another_policy() {
        let dir = tmp("sections");
        let d = dir.path();
        write(d, "light.toml", GEN);
        let app = APP;
        for (i, (section, policy)) in [
            ("[ucp-online]", "ucp"),
            ("[dunn-dynamic]", "dunn"),
            ("[kpart-dynaway]", "kpart"),
            ("[lfoc-online]", "lfoc"),
            ("[throttle-online]", "stock"),
        ]
        .iter()
        .enumerate()
        {
            let p = write(
                d,
                &format!("s{i}.toml"),
                &format!("platform = \"xeon-e5506\"\npolicy = \"{policy}\"\n{app}{section}\n"),
            );
            let key = section.trim_matches(['[', ']']);
            let e = Scenario::load(&p).unwrap_err().to_string();
            assert!(
                e.ends_with(&format!(
                    "s{i}.toml: {key}: is for policy = \"{key}\"; this scenario's policy is another"
                )),
                "{e}"
            );
        }
    }
}
