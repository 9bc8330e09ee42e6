//! The scenario's CAT policy: its `policy` key parsed into an
//! [`Algorithm`] the simulator can run (no exact solver; `user` with a
//! `plan`), and the sections that only one policy reads (`lfoc-preset`,
//! `[ucp-online]`, `[dunn-dynamic]`, `[kpart-dynaway]`, `[lfoc-online]`,
//! `[throttle-online]`)
//! refused under another.

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

#[cfg(test)]
mod tests {
    use super::super::fixtures::{tmp, write, GEN};
    use super::super::Scenario;

    #[test]
    fn a_policy_s_section_is_refused_under_another_policy() {
        let dir = tmp("sections");
        let d = dir.path();
        write(d, "light.toml", GEN);
        let app = "[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n";
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
