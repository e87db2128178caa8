//! `mrc_ctl.h`'s objects: EV format profiles, EV profiles, CC profiles
//! (each INIT -> OFFLINE -> ONLINE), the EV-event CQ, and the EV states a
//! controller sets. One [`Ctl`] per device context.
//!
//! How they reach the driver: a QP bound to an EV profile at INIT takes
//! the profile's EV values at RTS (`RtsAttr::evs`), one bound to a CC
//! profile takes its `max_cwnd` (`RtsAttr::cc`); setting an EV's state
//! denies or allows that EV on every QP bound to the profile
//! (`Controller::deny` / `allow`); the EV-event CQ reads the driver's
//! EV-event ring and names each event's profile and EV value, keeping
//! the kinds of state the profile's event mask asks for.

use std::collections::HashMap;
use std::os::raw::c_int;

use driver::{Controller, QueuePair};

/// Profile life cycle, `enum mrc_ctl_profile_state`.
pub const STATE_INIT: u32 = 0;
pub const STATE_OFFLINE: u32 = 1;
pub const STATE_ONLINE: u32 = 2;

/// `enum mrc_ctl_ev_profile_type`.
pub const EV_AUTO: u32 = 0;
pub const EV_EXPLICIT: u32 = 1;
pub const EV_GENERATED: u32 = 2;

/// `enum mrc_ctl_ev_state`; the event mask has bit `1 << state`.
pub const EV_GOOD: u32 = 0;
pub const EV_ASSUMED_BAD: u32 = 1;
pub const EV_DENIED: u32 = 2;

/// EVs per QP the driver takes (`EvProfile::values`: 1..=128).
pub const MAX_EVS: u32 = 128;
/// EV values the driver carries: UDP source ports (16 bits; MRC 1.0's
/// 32-bit EVs need the IPv6 flow label, which the card does not set).
pub const MAX_EV_VALUE: u32 = 0xFFFF;
/// Fields of an EV format and the bits they may take together.
pub const MAX_EV_FIELDS: usize = 8;
pub const EV_BITS: u32 = 32;
/// AUTO profiles: each QP takes a block of this many consecutive source
/// ports from [`AUTO_EV_BASE`], by QP number.
pub const AUTO_EV_BASE: u32 = 0xC000;
pub const AUTO_EV_BLOCK: u32 = MAX_EVS;
/// UET NSCC's parameters, in `struct mrc_ctl_cc_profile_attr` order
/// (disable_qa .. target_delay).
pub const NSCC_PARAMS: usize = 13;
/// Index of max_cwnd among them (bytes).
pub const NSCC_MAX_CWND: usize = 9;
/// The one algorithm MRC 1.0 names.
pub const NSCC_NAME: &str = "uet-1.0-nscc";

const EINVAL: c_int = 22;
const ENOENT: c_int = 2;
const EBUSY: c_int = 16;
const ENOSPC: c_int = 28;

/// Profiles of each kind a context holds.
pub const MAX_PROFILES: usize = 256;

#[derive(Clone, Debug)]
pub struct EvProfile {
    pub kind: u32,
    pub format: u32,
    pub ev_count: u32,
    pub ev_min_active: u32,
    pub event_mask: u32,
    /// EXPLICIT: the values; GENERATED: base .. base + count; AUTO: empty
    /// (chosen per QP).
    pub values: Vec<u32>,
    pub ev_base: u32,
    pub state: u32,
    /// QPs bound to it.
    pub users: u32,
}

impl EvProfile {
    /// The EV values of QP `qpn` under this profile.
    pub fn values_for(&self, qpn: u32) -> Vec<u16> {
        let vals: Vec<u32> = match self.kind {
            EV_AUTO => {
                let blocks = (MAX_EV_VALUE + 1 - AUTO_EV_BASE) / AUTO_EV_BLOCK;
                let base = AUTO_EV_BASE + (qpn % blocks) * AUTO_EV_BLOCK;
                (0..self.ev_count).map(|i| base + i).collect()
            }
            _ => self.values.clone(),
        };
        vals.into_iter().map(|v| v as u16).collect()
    }
}

pub struct CcProfile {
    pub params: [u32; NSCC_PARAMS],
    pub state: u32,
    pub users: u32,
}

/// A QP bound to profiles (the ids, and the EV values it took at RTS).
#[derive(Clone, Debug, Default)]
pub struct Binding {
    pub ev: Option<u32>,
    pub cc: Option<u32>,
    pub ev_values: Vec<u16>,
}

#[derive(Default)]
pub struct Ctl {
    pub formats: HashMap<u32, Vec<u8>>,
    pub ev: HashMap<u32, EvProfile>,
    pub cc: HashMap<u32, CcProfile>,
    next_id: u32,
    /// The EV-event CQ's reader (the driver allows one per context).
    pub controller: Option<Controller>,
    pub ev_cq_open: bool,
    /// Results of endpoint requests taken from the device and not yet
    /// claimed, by request id, oldest first: each caller claims its own
    /// (several threads may have batches in flight on one context).
    endpoint_results: std::collections::VecDeque<driver::device::EndpointResult>,
}

/// Endpoint results kept unclaimed at most (a caller that gave up never
/// claims its own); the oldest go first.
const MAX_UNCLAIMED_RESULTS: usize = 4096;

impl Ctl {
    /// Move the device's endpoint results into `endpoint_results`.
    fn take_endpoint_results(&mut self, ctx: &Ctx) {
        while let Some(r) = ctx.ctx.device().endpoint_result() {
            if self.endpoint_results.len() >= MAX_UNCLAIMED_RESULTS {
                self.endpoint_results.pop_front();
            }
            self.endpoint_results.push_back(r);
        }
    }
}

fn request_id(r: &driver::device::EndpointResult) -> u16 {
    use driver::device::EndpointResult as R;
    match *r {
        R::EvProbe { request_id, .. } | R::PortStatus { request_id, .. } | R::TimedOut { request_id, .. } => request_id,
    }
}

impl Ctl {
    fn id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }

    pub fn create_format(&mut self, widths: &[u8]) -> Result<u32, c_int> {
        let total: u32 = widths.iter().map(|&w| u32::from(w)).sum();
        if widths.is_empty() || widths.len() > MAX_EV_FIELDS || widths.contains(&0) || total > EV_BITS {
            return Err(EINVAL);
        }
        if self.formats.len() >= MAX_PROFILES {
            return Err(ENOSPC);
        }
        let id = self.id();
        self.formats.insert(id, widths.to_vec());
        Ok(id)
    }

    pub fn destroy_format(&mut self, id: u32) -> Result<(), c_int> {
        if !self.formats.contains_key(&id) {
            return Err(ENOENT);
        }
        if self.ev.values().any(|p| p.format == id) {
            return Err(EBUSY);
        }
        self.formats.remove(&id);
        Ok(())
    }

    /// Check and store an EV profile (state INIT).
    pub fn create_ev(&mut self, mut p: EvProfile) -> Result<u32, c_int> {
        if p.format != 0 && !self.formats.contains_key(&p.format) {
            return Err(ENOENT);
        }
        if p.kind == EV_EXPLICIT {
            p.ev_count = p.values.len() as u32;
        }
        if p.kind == EV_GENERATED {
            // The count is checked before anything is made of it.
            if p.ev_count == 0 || p.ev_count > MAX_EVS {
                return Err(EINVAL);
            }
            p.values = (0..p.ev_count).map(|i| p.ev_base.wrapping_add(i)).collect();
        }
        check_ev(&p)?;
        if self.ev.len() >= MAX_PROFILES {
            return Err(ENOSPC);
        }
        p.state = STATE_INIT;
        p.users = 0;
        let id = self.id();
        self.ev.insert(id, p);
        Ok(id)
    }

    /// New EV values of an EXPLICIT profile that is not ONLINE (QPs take
    /// their EVs at RTS: a profile in use is not changed under them).
    pub fn replace_evs(&mut self, id: u32, values: &[u32]) -> Result<(), c_int> {
        let p = self.ev.get_mut(&id).ok_or(ENOENT)?;
        if p.kind != EV_EXPLICIT {
            return Err(EINVAL);
        }
        if p.state == STATE_ONLINE || p.users > 0 {
            return Err(EBUSY);
        }
        let mut q = p.clone();
        q.values = values.to_vec();
        q.ev_count = values.len() as u32;
        check_ev(&q)?;
        *p = q;
        Ok(())
    }

    pub fn destroy_ev(&mut self, id: u32) -> Result<(), c_int> {
        let p = self.ev.get(&id).ok_or(ENOENT)?;
        if p.users > 0 {
            return Err(EBUSY);
        }
        self.ev.remove(&id);
        Ok(())
    }

    pub fn create_cc(&mut self, name: &str, params: [u32; NSCC_PARAMS]) -> Result<u32, c_int> {
        if name != NSCC_NAME || params[NSCC_MAX_CWND] == 0 {
            return Err(EINVAL);
        }
        if self.cc.len() >= MAX_PROFILES {
            return Err(ENOSPC);
        }
        let id = self.id();
        self.cc.insert(
            id,
            CcProfile {
                params,
                state: STATE_INIT,
                users: 0,
            },
        );
        Ok(id)
    }

    pub fn destroy_cc(&mut self, id: u32) -> Result<(), c_int> {
        let p = self.cc.get(&id).ok_or(ENOENT)?;
        if p.users > 0 {
            return Err(EBUSY);
        }
        self.cc.remove(&id);
        Ok(())
    }

    /// Bind a QP moving to INIT to profiles, which must be ONLINE.
    pub fn bind(&mut self, ev: Option<u32>, cc: Option<u32>) -> Result<Binding, c_int> {
        for (id, state) in [
            (ev, ev.map(|i| self.ev.get(&i).map(|p| p.state))),
            (cc, cc.map(|i| self.cc.get(&i).map(|p| p.state))),
        ] {
            match (id, state) {
                (Some(_), Some(None)) => return Err(ENOENT),
                (Some(_), Some(Some(s))) if s != STATE_ONLINE => return Err(EINVAL),
                _ => {}
            }
        }
        if let Some(p) = ev.and_then(|i| self.ev.get_mut(&i)) {
            p.users += 1;
        }
        if let Some(p) = cc.and_then(|i| self.cc.get_mut(&i)) {
            p.users += 1;
        }
        Ok(Binding {
            ev,
            cc,
            ev_values: Vec::new(),
        })
    }

    /// A QP leaves its profiles (destroyed, or back to RESET).
    pub fn unbind(&mut self, b: &Binding) {
        if let Some(p) = b.ev.and_then(|i| self.ev.get_mut(&i)) {
            p.users = p.users.saturating_sub(1);
        }
        if let Some(p) = b.cc.and_then(|i| self.cc.get_mut(&i)) {
            p.users = p.users.saturating_sub(1);
        }
    }
}

/// The rules every EV profile keeps: a kind we know, 1..=128 EVs, values
/// the driver carries and distinct, at most `ev_count` active at minimum,
/// an event mask of known states.
fn check_ev(p: &EvProfile) -> Result<(), c_int> {
    let known_mask = (1 << EV_GOOD) | (1 << EV_ASSUMED_BAD) | (1 << EV_DENIED);
    if p.kind > EV_GENERATED
        || p.ev_count == 0
        || p.ev_count > MAX_EVS
        || p.ev_min_active > p.ev_count
        || p.event_mask & !known_mask != 0
    {
        return Err(EINVAL);
    }
    if p.values.iter().any(|&v| v > MAX_EV_VALUE) {
        return Err(EINVAL);
    }
    let mut sorted = p.values.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != p.values.len() {
        return Err(EINVAL);
    }
    Ok(())
}

/// INIT -> OFFLINE -> ONLINE, ONLINE -> OFFLINE; anything else EINVAL.
pub fn next_state(from: u32, to: u32) -> Result<u32, c_int> {
    match (from, to) {
        (STATE_INIT, STATE_OFFLINE) | (STATE_OFFLINE, STATE_ONLINE) | (STATE_ONLINE, STATE_OFFLINE) => Ok(to),
        _ => Err(EINVAL),
    }
}

/// Deny (`state` DENIED) or allow (GOOD) EV `ev` on `qp`.
pub fn set_ev_state(c: &Controller, qp: &QueuePair, ev: u16, state: u32) -> Result<(), c_int> {
    match state {
        EV_DENIED => c.deny(qp, u16::MAX, ev),
        EV_GOOD => c.allow(qp, u16::MAX, ev),
        // ASSUMED_BAD is the NIC's verdict, not a controller's.
        _ => return Err(EINVAL),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explicit(values: &[u32]) -> EvProfile {
        EvProfile {
            kind: EV_EXPLICIT,
            format: 0,
            ev_count: 0,
            ev_min_active: 1,
            event_mask: 1 << EV_ASSUMED_BAD,
            values: values.to_vec(),
            ev_base: 0,
            state: 0,
            users: 0,
        }
    }

    #[test]
    fn profiles_go_online_before_qps_bind_and_stay_while_bound() {
        let mut c = Ctl::default();
        let id = c.create_ev(explicit(&[0xC000, 0xC001])).unwrap();
        assert_eq!(c.bind(Some(id), None).unwrap_err(), EINVAL); // INIT
        assert_eq!(next_state(STATE_INIT, STATE_ONLINE), Err(EINVAL));
        c.ev.get_mut(&id).unwrap().state = next_state(STATE_INIT, STATE_OFFLINE).unwrap();
        c.ev.get_mut(&id).unwrap().state = next_state(STATE_OFFLINE, STATE_ONLINE).unwrap();
        let b = c.bind(Some(id), None).unwrap();
        assert_eq!(c.destroy_ev(id), Err(EBUSY));
        assert_eq!(c.replace_evs(id, &[1]), Err(EBUSY));
        c.unbind(&b);
        assert_eq!(c.destroy_ev(id), Ok(()));
        assert_eq!(c.bind(Some(id), None).unwrap_err(), ENOENT);
    }

    #[test]
    fn ev_profiles_are_checked() {
        let mut c = Ctl::default();
        assert_eq!(c.create_ev(explicit(&[])), Err(EINVAL));
        assert_eq!(c.create_ev(explicit(&[7, 7])), Err(EINVAL));
        assert_eq!(c.create_ev(explicit(&[0x1_0000])), Err(EINVAL));
        let mut p = explicit(&[1, 2]);
        p.ev_min_active = 3;
        assert_eq!(c.create_ev(p), Err(EINVAL));
        let mut p = explicit(&[1]);
        p.format = 99;
        assert_eq!(c.create_ev(p), Err(ENOENT));
        let g = EvProfile {
            kind: EV_GENERATED,
            ev_count: 4,
            ev_base: 0xD000,
            ..explicit(&[])
        };
        let id = c.create_ev(g).unwrap();
        assert_eq!(c.ev[&id].values_for(5), vec![0xD000, 0xD001, 0xD002, 0xD003]);
        let a = EvProfile {
            kind: EV_AUTO,
            ev_count: 3,
            ..explicit(&[])
        };
        let id = c.create_ev(a).unwrap();
        assert_eq!(c.ev[&id].values_for(1), vec![0xC080, 0xC081, 0xC082]);
        assert_eq!(c.create_format(&[8, 8, 8, 9]), Err(EINVAL));
        assert!(c.create_format(&[8, 8, 16]).is_ok());
    }

    #[test]
    fn a_generated_profile_of_too_many_evs_is_refused_before_it_is_made() {
        let mut c = Ctl::default();
        let g = EvProfile {
            kind: EV_GENERATED,
            ev_count: u32::MAX,
            ..explicit(&[])
        };
        assert_eq!(c.create_ev(g), Err(EINVAL));
    }

    #[test]
    fn cc_profiles_name_nscc() {
        let mut c = Ctl::default();
        let mut p = [0u32; NSCC_PARAMS];
        assert_eq!(c.create_cc(NSCC_NAME, p), Err(EINVAL)); // max_cwnd 0
        p[NSCC_MAX_CWND] = 1 << 20;
        assert_eq!(c.create_cc("dcqcn", p), Err(EINVAL));
        assert!(c.create_cc(NSCC_NAME, p).is_ok());
    }
}

// ---- the flat C ABI (libmrc/c/mrc_ctl.c) ----

use crate::{guard, lock, Ctx, Qp};

fn with_ctl<R>(c: *const Ctx, err: R, f: impl FnOnce(&Ctx, &mut Ctl) -> R) -> R {
    // SAFETY: a live context from the C layer.
    let Some(ctx) = (unsafe { c.as_ref() }) else {
        return err;
    };
    guard(err, || {
        let mut ctl = lock(&ctx.ctl);
        f(ctx, &mut ctl)
    })
}

fn out<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: the C layer's out pointer.
        unsafe { *p = v };
    }
}

/// # Safety
/// `p` is null (then `n` is 0) or holds `n` values.
unsafe fn slice<'a, T>(p: *const T, n: u32) -> Option<&'a [T]> {
    if n == 0 {
        return Some(&[]);
    }
    // SAFETY: the caller's contract.
    (!p.is_null()).then(|| unsafe { std::slice::from_raw_parts(p, n as usize) })
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_create_ev_format(c: *const Ctx, widths: *const u8, n: u32, id: *mut u32) -> c_int {
    // SAFETY: `widths` holds `n` bytes.
    let Some(w) = (unsafe { slice(widths, n) }) else {
        return EINVAL;
    };
    with_ctl(c, EINVAL, |_, ctl| match ctl.create_format(w) {
        Ok(i) => {
            out(id, i);
            0
        }
        Err(e) => e,
    })
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_destroy_ev_format(c: *const Ctx, id: u32) -> c_int {
    with_ctl(c, EINVAL, |_, ctl| ctl.destroy_format(id).err().unwrap_or(0))
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_create_ev_profile(
    c: *const Ctx,
    kind: u32,
    format: u32,
    ev_count: u32,
    ev_min_active: u32,
    event_mask: u32,
    evs: *const u32,
    n_evs: u32,
    ev_base: u32,
    id: *mut u32,
) -> c_int {
    // SAFETY: `evs` holds `n_evs` values.
    let Some(values) = (unsafe { slice(evs, n_evs) }) else {
        return EINVAL;
    };
    // Values are given exactly for an EXPLICIT profile.
    if (kind == EV_EXPLICIT) == values.is_empty() {
        return EINVAL;
    }
    let p = EvProfile {
        kind,
        format,
        ev_count,
        ev_min_active,
        event_mask,
        values: values.to_vec(),
        ev_base,
        state: STATE_INIT,
        users: 0,
    };
    with_ctl(c, EINVAL, |_, ctl| match ctl.create_ev(p) {
        Ok(i) => {
            out(id, i);
            0
        }
        Err(e) => e,
    })
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_destroy_ev_profile(c: *const Ctx, id: u32) -> c_int {
    with_ctl(c, EINVAL, |_, ctl| ctl.destroy_ev(id).err().unwrap_or(0))
}

/// Move an EV or (`cc`) CC profile to `state`.
#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_profile_state(c: *const Ctx, cc: c_int, id: u32, state: u32) -> c_int {
    with_ctl(c, EINVAL, |_ctx, ctl| {
        let cur = if cc != 0 {
            ctl.cc.get_mut(&id).map(|p| &mut p.state)
        } else {
            ctl.ev.get_mut(&id).map(|p| &mut p.state)
        };
        let Some(cur) = cur else { return ENOENT };
        match next_state(*cur, state) {
            Ok(s) => *cur = s,
            Err(e) => return e,
        }
        0
    })
}

/// An EV profile's attributes, its state and up to `cap` of its values
/// (`n_evs`: how many it has; AUTO: 0, the values are per QP).
#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_query_ev_profile(
    c: *const Ctx,
    id: u32,
    attrs: *mut u32,
    evs: *mut u32,
    cap: u32,
    n_evs: *mut u32,
) -> c_int {
    with_ctl(c, EINVAL, |_, ctl| {
        let Some(p) = ctl.ev.get(&id) else { return ENOENT };
        if attrs.is_null() {
            return EINVAL;
        }
        // kind, format, ev_count, ev_min_active, event_mask, ev_base, state
        let a = [
            p.kind,
            p.format,
            p.ev_count,
            p.ev_min_active,
            p.event_mask,
            p.ev_base,
            p.state,
        ];
        // SAFETY: the C layer passes QUERY_EV_ATTRS values.
        unsafe { std::ptr::copy_nonoverlapping(a.as_ptr(), attrs, a.len()) };
        let shown = if p.kind == EV_AUTO { &[][..] } else { &p.values[..] };
        out(n_evs, shown.len() as u32);
        if !evs.is_null() {
            let n = shown.len().min(cap as usize);
            // SAFETY: `evs` holds `cap` values.
            unsafe { std::ptr::copy_nonoverlapping(shown.as_ptr(), evs, n) };
        }
        0
    })
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_replace_evs(c: *const Ctx, id: u32, evs: *const u32, n: u32) -> c_int {
    // SAFETY: `evs` holds `n` values.
    let Some(v) = (unsafe { slice(evs, n) }) else {
        return EINVAL;
    };
    with_ctl(c, EINVAL, |_, ctl| ctl.replace_evs(id, v).err().unwrap_or(0))
}

/// Set EV `ev` of profile `id` to GOOD or DENIED on every QP bound to it
/// that runs with that EV; ENOENT if the profile has no such EV.
#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_set_ev_state(c: *const Ctx, id: u32, ev: u32, state: u32) -> c_int {
    with_ctl(c, EINVAL, |ctx, ctl| {
        let Some(p) = ctl.ev.get(&id) else { return ENOENT };
        if p.kind != EV_AUTO && !p.values.contains(&ev) || ev > MAX_EV_VALUE {
            return ENOENT;
        }
        if state != EV_GOOD && state != EV_DENIED {
            return EINVAL;
        }
        if ctl.controller.is_none() {
            match ctx.ctx.controller(EV_RING_LOG2) {
                Ok(k) => ctl.controller = Some(k),
                Err(_) => return EBUSY,
            }
        }
        let Some(k) = ctl.controller.as_ref() else { return EBUSY };
        for &addr in lock(&ctx.qp_objs).values() {
            // SAFETY: live QPs (removed from the map before they go).
            let q = unsafe { &*(addr as *const Qp) };
            let bound = {
                let b = lock(&q.binding);
                b.ev == Some(id) && b.ev_values.contains(&(ev as u16))
            };
            if bound {
                if let Err(e) = set_ev_state(k, &lock(&q.qp), ev as u16, state) {
                    return e;
                }
            }
        }
        0
    })
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_create_cc_profile(
    c: *const Ctx,
    name: *const std::os::raw::c_char,
    params: *const u32,
    id: *mut u32,
) -> c_int {
    if name.is_null() || params.is_null() {
        return EINVAL;
    }
    // SAFETY: a NUL-terminated name and NSCC_PARAMS values.
    let (name, p) = unsafe {
        let mut p = [0u32; NSCC_PARAMS];
        std::ptr::copy_nonoverlapping(params, p.as_mut_ptr(), NSCC_PARAMS);
        (std::ffi::CStr::from_ptr(name).to_string_lossy().into_owned(), p)
    };
    with_ctl(c, EINVAL, |_, ctl| match ctl.create_cc(&name, p) {
        Ok(i) => {
            out(id, i);
            0
        }
        Err(e) => e,
    })
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_destroy_cc_profile(c: *const Ctx, id: u32) -> c_int {
    with_ctl(c, EINVAL, |_, ctl| ctl.destroy_cc(id).err().unwrap_or(0))
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_query_cc_profile(c: *const Ctx, id: u32, params: *mut u32, state: *mut u32) -> c_int {
    with_ctl(c, EINVAL, |_, ctl| {
        let Some(p) = ctl.cc.get(&id) else { return ENOENT };
        if !params.is_null() {
            // SAFETY: the C layer passes NSCC_PARAMS values.
            unsafe { std::ptr::copy_nonoverlapping(p.params.as_ptr(), params, NSCC_PARAMS) };
        }
        out(state, p.state);
        0
    })
}

/// Slots of the driver's EV-event ring (2^n).
const EV_RING_LOG2: u8 = 8;

/// Open the context's EV-event CQ (one per context: EBUSY for a second).
#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_open_ev_cq(c: *const Ctx) -> c_int {
    with_ctl(c, EINVAL, |ctx, ctl| {
        if ctl.ev_cq_open {
            return EBUSY;
        }
        if ctl.controller.is_none() {
            match ctx.ctx.controller(EV_RING_LOG2) {
                Ok(k) => ctl.controller = Some(k),
                Err(_) => return EBUSY,
            }
        }
        ctl.ev_cq_open = true;
        0
    })
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_close_ev_cq(c: *const Ctx) -> c_int {
    with_ctl(c, EINVAL, |_, ctl| {
        if !ctl.ev_cq_open {
            return EINVAL;
        }
        ctl.ev_cq_open = false;
        0
    })
}

/// An EV event as the C layer reads it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MrcxEvEvent {
    pub ev_profile_id: u32,
    pub ev: u32,
    pub qp_num: u32,
    /// `EV_GOOD`, `EV_ASSUMED_BAD`, `EV_DENIED`.
    pub new_state: u32,
    /// `contract::layout::EvReason` as u32.
    pub reason: u32,
    pub time_ns: u32,
}

/// Up to `max` EV events into `events`: how many, or a negative errno.
/// Events of QPs bound to no profile, and kinds of state the profile's
/// mask does not ask for, are consumed and not returned.
#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_poll_ev_cq(c: *const Ctx, max: c_int, events: *mut MrcxEvEvent) -> c_int {
    if max < 0 || (max > 0 && events.is_null()) {
        return -EINVAL;
    }
    with_ctl(c, -EINVAL, |ctx, ctl| {
        if !ctl.ev_cq_open {
            return -EINVAL;
        }
        let mut n = 0usize;
        while n < max as usize {
            let Some(k) = ctl.controller.as_mut() else {
                return -EINVAL;
            };
            let e = match k.poll_event() {
                Ok(Some(e)) => e,
                Ok(None) => break,
                // A malformed entry (the driver counts it): skip it.
                Err(_) => continue,
            };
            let (id, ev) = {
                // The map's lock held while the QP is read: a QP leaves
                // the map (under the ctl lock, held here) before it goes.
                let objs = lock(&ctx.qp_objs);
                let Some(&addr) = objs.get(&e.qp) else { continue };
                // SAFETY: a live QP (in the map).
                let q = unsafe { &*(addr as *const Qp) };
                let b = lock(&q.binding);
                match b.ev {
                    Some(id) => (id, b.ev_values.get(usize::from(e.ev_index)).copied()),
                    None => continue,
                }
            };
            let state = e.new_state as u32;
            let wanted = ctl.ev.get(&id).is_some_and(|p| p.event_mask & (1 << state) != 0);
            if !wanted {
                continue;
            }
            let ev = MrcxEvEvent {
                ev_profile_id: id,
                ev: u32::from(ev.unwrap_or(e.ev)),
                qp_num: e.qp,
                new_state: state,
                reason: e.reason as u32,
                time_ns: e.time_ns,
            };
            // SAFETY: `events` holds `max` entries.
            unsafe { *events.add(n) = ev };
            n += 1;
        }
        n as c_int
    })
}

/// Endpoint operation kinds (`enum mrc_ctl_endpoint_op_type`).
const EP_EV_PROBE: u32 = 0;
const EP_PORT_STATUS_UPDATE: u32 = 1;
const EOPNOTSUPP: c_int = 95;
const EAGAIN: c_int = 11;
const ETIMEDOUT: c_int = 110;

/// Send one endpoint operation to the NIC whose GID is `gid` (16 bytes):
/// its request id into `id`; 0 or an errno (EOPNOTSUPP: the device sends
/// none; EAGAIN: too many await an answer).
#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_endpoint_post(
    c: *const Ctx,
    kind: u32,
    gid: *const u8,
    ev: u32,
    port: u8,
    id: *mut u32,
) -> c_int {
    if gid.is_null() || id.is_null() {
        return EINVAL;
    }
    // SAFETY: a live context.
    let Some(ctx) = (unsafe { c.as_ref() }) else {
        return EINVAL;
    };
    let mut g = [0u8; 16];
    // SAFETY: 16 bytes of GID.
    unsafe { std::ptr::copy_nonoverlapping(gid, g.as_mut_ptr(), 16) };
    let v6 = std::net::Ipv6Addr::from(g);
    let peer = v6
        .to_ipv4_mapped()
        .map_or(std::net::IpAddr::V6(v6), std::net::IpAddr::V4);
    let req = match kind {
        EP_EV_PROBE => driver::device::EndpointRequest::EvProbe { peer, ev, port },
        EP_PORT_STATUS_UPDATE => driver::device::EndpointRequest::PortStatusUpdate { peer, ev },
        _ => return EINVAL,
    };
    // The device's results are taken into the context's keeping at every
    // post as well: a batch whose answers keep coming never waits for a
    // full queue, and the device's own queue (1,024 results) never fills.
    with_ctl(c, EINVAL, |ctx, ctl| {
        ctl.take_endpoint_results(ctx);
        0
    });
    guard(EINVAL, || match ctx.ctx.device().endpoint_request(req) {
        Ok(i) => {
            out(id, u32::from(i));
            0
        }
        Err(driver::DeviceError::Busy(_)) => EAGAIN,
        Err(_) => EOPNOTSUPP,
    })
}

/// The result of endpoint request `id` if it has come: 1 (0 or
/// ETIMEDOUT into `status`; for a probe the round trip and the peer's
/// service time, for a Port Status Update the peer's ports that are up),
/// 0 if not yet. Results of other requests are kept for their callers.
#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_endpoint_take(
    c: *const Ctx,
    id: u32,
    status: *mut c_int,
    rtt_ns: *mut u32,
    service_ns: *mut u32,
    peer_ports_up: *mut u32,
) -> c_int {
    use driver::device::EndpointResult as R;
    with_ctl(c, -EINVAL, |ctx, ctl| {
        ctl.take_endpoint_results(ctx);
        let Some(at) = ctl.endpoint_results.iter().position(|r| u32::from(request_id(r)) == id) else {
            return 0;
        };
        let Some(r) = ctl.endpoint_results.remove(at) else {
            return 0;
        };
        let ns = |d: driver::device::ModelDuration| d.as_ns().min(u64::from(u32::MAX)) as u32;
        match r {
            R::EvProbe { rtt, service_time, .. } => {
                out(status, 0);
                out(rtt_ns, ns(rtt));
                out(service_ns, ns(service_time));
            }
            R::PortStatus { peer_ports_up: up, .. } => {
                out(status, 0);
                out(peer_ports_up, up);
            }
            R::TimedOut { .. } => out(status, ETIMEDOUT),
        }
        1
    })
}
