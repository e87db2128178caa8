//! `mrc_ctl.h`'s objects: EV format profiles, EV profiles and CC profiles
//! (each INIT -> OFFLINE -> ONLINE -> OFFLINE -> INIT, named by ids the
//! controller picks), the EV-event CQ, and the EV states a controller
//! sets. One [`Ctl`] per device context.
//!
//! How they reach the driver: a QP bound to an ONLINE EV profile at INIT
//! takes the profile's EV values at RTS (`RtsAttr::evs`), and the EVs the
//! controller DENIED are denied on it then; one bound to a CC profile
//! takes its NSCC `max_cwnd` (`RtsAttr::cc`); setting an EV's state
//! denies or allows that EV on every QP bound to the profile
//! (`Controller::deny` / `allow`); the EV-event CQ reads the driver's
//! EV-event ring and names each event's profile and EV value, keeping the
//! states the profile's event mask asks for.

use std::collections::HashMap;
use std::os::raw::c_int;

use driver::{Controller, NsccParams, QueuePair};

/// Profile life cycle, `enum mrc_ctl_profile_state`.
pub const STATE_INIT: u32 = 0;
pub const STATE_OFFLINE: u32 = 1;
pub const STATE_ONLINE: u32 = 2;

/// `enum mrc_ctl_ev_mode`.
pub const EV_MODE_AUTO: u32 = 1 << 0;
pub const EV_MODE_EXP: u32 = 1 << 1;
pub const EV_MODE_GEN: u32 = 1 << 2;
/// `enum mrc_ctl_ev_fmt_mode`: the one this device carries is UDP (the
/// EV is the UDP source port; STEV needs the IPv6 flow label and SRv6 its
/// addresses, which neither the card nor the soft NIC sets).
pub const FMT_MODE_UDP: u32 = 1 << 2;

/// `enum mrc_ctl_ev_state`; an event mask is an OR of them.
pub const EV_GOOD: u32 = 1 << 0;
pub const EV_ASSUMED_BAD: u32 = 1 << 1;
pub const EV_DENIED: u32 = 1 << 2;
pub const EV_UNKNOWN: u32 = 1 << 31;
/// The states an event mask may name.
pub const EVENT_MASK_STATES: u32 = EV_GOOD | EV_ASSUMED_BAD;

/// EVs per QP the driver takes (`EvProfile::values`: 1..=128).
pub const MAX_EVS: u32 = 128;
/// Bits of an EV: a UDP source port.
pub const EV_WIDTH: u32 = 16;
/// Fields of an EV format (and of an EV profile).
pub const MAX_EV_FIELDS: usize = 8;
/// AUTO profiles: each QP takes a block of this many consecutive source
/// ports from [`AUTO_EV_BASE`], by QP number.
pub const AUTO_EV_BASE: u32 = 0xC000;
pub const AUTO_EV_BLOCK: u32 = MAX_EVS;
/// Profiles of each kind a context holds: ids 1 ..= this (0 is "none" to
/// `mrcx_bind_profiles`).
pub const MAX_PROFILES: u64 = 256;
/// The port of every EV (a device has one: verbs port 1).
pub const PORT: u8 = 1;

const EINVAL: c_int = 22;
const ENOENT: c_int = 2;
const EBUSY: c_int = 16;
const E2BIG: c_int = 7;

/// An EV entry: its value and port; value 0 on port 0 is an entry not yet
/// given (`MRC_CTL_EV_UNPOPULATED`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ev {
    pub value: u32,
    pub port: u32,
}

pub const UNPOPULATED: Ev = Ev { value: 0, port: 0 };

/// `struct mrc_ctl_ev_field`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EvField {
    pub width: u32,
    pub init_val: u32,
    pub min_val: u32,
    pub max_val: u32,
    pub mask: u32,
}

#[derive(Clone, Debug, Default)]
pub struct FmtProfile {
    pub state: u32,
    pub mode: u32,
    pub widths: Vec<u8>,
}

#[derive(Clone, Debug, Default)]
pub struct EvProfile {
    pub state: u32,
    pub mode: u32,
    pub format: u64,
    pub ev_count: u32,
    pub ev_min_active: u32,
    pub event_mask: u32,
    /// Whether MIN_ACTIVE and EVENT_MASK were given (ONLINE needs both).
    pub min_active_set: bool,
    pub event_mask_set: bool,
    pub fields: Vec<EvField>,
    /// EXPLICIT and GENERATED: the array (`ev_count` entries) and each
    /// entry's state as the controller set it (GOOD or DENIED). AUTO:
    /// empty (the values are per QP).
    pub evs: Vec<Ev>,
    pub states: Vec<u32>,
    /// EXPLICIT with fields: each entry of `evs` expanded through them
    /// into the format ([`expand`]), the values the QPs carry; made on the
    /// way ONLINE. Empty: the values are `evs`'.
    pub wire: Vec<u32>,
    /// QPs bound to it.
    pub users: u32,
}

impl EvProfile {
    /// The EV values of QP `qpn` under this profile.
    pub fn values_for(&self, qpn: u32) -> Vec<u16> {
        if self.mode == EV_MODE_AUTO {
            let blocks = ((1 << EV_WIDTH) - AUTO_EV_BASE) / AUTO_EV_BLOCK;
            let base = AUTO_EV_BASE + (qpn % blocks) * AUTO_EV_BLOCK;
            return (0..self.ev_count).map(|i| (base + i) as u16).collect();
        }
        (0..self.evs.len()).map(|i| self.wire_value(i)).collect()
    }

    /// The value QPs carry for entry `i` of `evs` (its expansion, if the
    /// profile expands its EVs).
    fn wire_value(&self, i: usize) -> u16 {
        self.wire.get(i).copied().unwrap_or_else(|| self.evs[i].value) as u16
    }

    /// The EV of the array a QP's EV `index` stands for (`None` for AUTO
    /// profiles, whose values are per QP).
    pub fn ev_at(&self, index: usize) -> Option<u32> {
        (self.mode != EV_MODE_AUTO)
            .then(|| self.evs.get(index).map(|e| e.value))
            .flatten()
    }

    /// The values the controller DENIED (a QP taking the profile at RTS
    /// denies them too), as the QPs carry them.
    pub fn denied_values(&self) -> Vec<u16> {
        (0..self.evs.len())
            .filter(|&i| self.states[i] == EV_DENIED)
            .map(|i| self.wire_value(i))
            .collect()
    }
}

/// `"uet-1.0-nscc"`, the algorithm the device names.
pub const CC_NONE: u32 = 0;
pub const CC_NSCC: u32 = 1;

#[derive(Clone, Debug, Default)]
pub struct CcProfile {
    pub state: u32,
    pub algorithm_set: bool,
    pub algorithm: u32,
    /// NSCC's parameters as the controller gave them (the C structure's
    /// bytes, returned by a query) and the window they name.
    pub config: Option<Vec<u8>>,
    pub max_cwnd: u32,
    /// The other NSCC parameters, as the driver takes them.
    pub nscc: NsccParams,
    pub users: u32,
}

impl CcProfile {
    /// The window ceiling and NSCC parameters of QPs bound to it (a soft
    /// NIC runs NSCC with them, a card the fixed `max_cwnd`); `None`: the
    /// device's default window.
    pub fn window(&self) -> Option<(u32, NsccParams)> {
        (self.algorithm == CC_NSCC && self.config.is_some()).then_some((self.max_cwnd, self.nscc))
    }
}

/// `struct mrc_ctl_cc_nscc_cfg` without its window (`CcReq::max_cwnd`),
/// flat (`struct mrcx_nscc`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Nscc {
    pub base_rtt: u32,
    pub target_delay: u32,
    pub disable_qa: u32,
    pub qa_gate: u32,
    pub qa_threshold: u32,
    pub gamma: f32,
    pub max_md_jump: f32,
    pub eta: f32,
    pub fi: f32,
    pub fi_scale: f32,
    pub adjust_bytes_threshold: u32,
    pub adjust_period_threshold: u32,
}

/// The largest `qa_gate`: a shift of a 64-bit window.
const MAX_QA_GATE: u32 = 63;

impl Nscc {
    /// The parameters as the driver takes them; `EINVAL` for a `gamma`
    /// or `max_md_jump` outside 0..=1 (shares of the window) or NaN, a
    /// negative or NaN `eta`, `fi` or `fi_scale`, a `qa_gate` above 63.
    pub fn params(&self) -> Result<NsccParams, c_int> {
        let share = |x: f32| (0.0..=1.0).contains(&x);
        let nonneg = |x: f32| x.is_finite() && x >= 0.0;
        if !share(self.gamma)
            || !share(self.max_md_jump)
            || !nonneg(self.eta)
            || !nonneg(self.fi)
            || !nonneg(self.fi_scale)
            || self.qa_gate > MAX_QA_GATE
        {
            return Err(EINVAL);
        }
        Ok(NsccParams {
            base_rtt_ns: self.base_rtt,
            target_delay_ns: self.target_delay,
            disable_qa: self.disable_qa != 0,
            qa_gate: self.qa_gate as u8,
            qa_threshold_ns: self.qa_threshold,
            gamma: self.gamma,
            max_md_jump: self.max_md_jump,
            eta: self.eta,
            fi: self.fi,
            fi_scale: self.fi_scale,
            adjust_bytes_threshold: self.adjust_bytes_threshold,
            adjust_period_threshold_ns: self.adjust_period_threshold,
        })
    }
}

/// A QP bound to profiles (the ids, and the EV values it took at RTS).
#[derive(Clone, Debug, Default)]
pub struct Binding {
    pub ev: Option<u32>,
    pub cc: Option<u32>,
    pub ev_values: Vec<u16>,
}

/// What `modify_fmt` is asked (`set`: the `SET_*` bits).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FmtReq {
    pub set: u32,
    pub state: u32,
    pub mode: u32,
    pub n_widths: u32,
    pub widths: *const u8,
}

/// What `modify_ev` is asked.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EvReq {
    pub set: u32,
    pub state: u32,
    pub mode: u32,
    pub ev_count: u32,
    pub format: u64,
    pub ev_min_active: u32,
    pub event_mask: u32,
    /// `EV_OP_*` (`EV_OP_NONE`: none).
    pub ev_op: u32,
    /// `FIELDS_OP_*`.
    pub fields_op: u32,
}

/// An entry of an EV operation.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EvEntry {
    pub ev: Ev,
    pub ev_new: Ev,
    pub state: u32,
    pub flags: u32,
}

/// What `modify_cc` is asked.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CcReq {
    pub set: u32,
    pub state: u32,
    /// `CC_NONE`, `CC_NSCC`, or another value: a name the device lacks.
    pub algorithm: u32,
    pub max_cwnd: u32,
    pub config: *const u8,
    pub config_len: u32,
    /// With `SET_CONFIG`: the other parameters (null: all 0).
    pub nscc: *const Nscc,
}

pub const SET_STATE: u32 = 1 << 0;
pub const SET_MODE: u32 = 1 << 1;
pub const SET_FIELDS: u32 = 1 << 2;
pub const SET_FORMAT: u32 = 1 << 3;
pub const SET_COUNT: u32 = 1 << 4;
pub const SET_MIN_ACTIVE: u32 = 1 << 5;
pub const SET_EVENT_MASK: u32 = 1 << 6;
pub const SET_ALGORITHM: u32 = 1 << 7;
pub const SET_CONFIG: u32 = 1 << 8;

/// EV operations (`enum mrc_ctl_ev_op` + 1; 0: none).
pub const EV_OP_NONE: u32 = 0;
pub const EV_OP_REPLACE: u32 = 1;
pub const EV_OP_MODIFY_STATE: u32 = 2;
pub const EV_OP_QUERY_STATE: u32 = 3;
pub const EV_OP_QUERY_ARRAY: u32 = 4;
pub const FIELDS_OP_NONE: u32 = 0;
pub const FIELDS_OP_MODIFY: u32 = 1;
pub const FIELDS_OP_QUERY: u32 = 2;
pub const F_ALL_COPIES: u32 = 1 << 0;

#[derive(Default)]
pub struct Ctl {
    pub formats: HashMap<u64, FmtProfile>,
    pub ev: HashMap<u32, EvProfile>,
    pub cc: HashMap<u32, CcProfile>,
    /// The EV-event CQ's reader (the driver allows one per context).
    pub controller: Option<Controller>,
    /// The EV-event CQ: the C layer's handle of its `mrc_cq`.
    pub ev_cq: Option<usize>,
    /// EV events taken from the device's ring for the EV-event CQ and
    /// not yet polled, at most `ev_cq_entries` (a notifier thread takes
    /// them to learn whether to signal the CQ's channel).
    ev_pending: std::collections::VecDeque<MrcxEvEvent>,
    ev_cq_entries: usize,
    /// The NIC's count of EV events its ring had no room for, when last
    /// read (`Controller::events_lost`), and the EV events lost since
    /// the last one queued: the next one queued reports them
    /// (`drop_count`).
    ev_lost_seen: u32,
    ev_drops: u32,
    /// The EVs the NIC marked ASSUMED_BAD on QPs bound to a profile, as
    /// its EV events said: (profile, EV value) -> the QPs (by number).
    /// `QUERY_EV_STATE` reports such an EV ASSUMED_BAD.
    nic_marks: HashMap<(u32, u16), std::collections::HashSet<u32>>,
    /// The program announced control API 1.0.1 (`mrc_ctl_query_device_ex`):
    /// its EV events carry their state.
    pub api_1_0_1: bool,
    /// Results of endpoint requests taken from the device and not yet
    /// claimed, by request id, oldest first: each caller claims its own
    /// (several threads may have batches in flight on one context).
    endpoint_results: std::collections::VecDeque<driver::device::EndpointResult>,
}

/// Endpoint results kept unclaimed at most (a caller that gave up never
/// claims its own); the oldest go first.
const MAX_UNCLAIMED_RESULTS: usize = 4096;

fn profile_id(id: u64) -> Result<u32, c_int> {
    if id == 0 || id > MAX_PROFILES {
        return Err(EINVAL);
    }
    Ok(id as u32)
}

/// The states a request may move a profile through: INIT -> OFFLINE ->
/// ONLINE -> OFFLINE -> INIT, or stay.
fn check_transition(from: u32, to: u32) -> Result<(), c_int> {
    match (from, to) {
        (a, b) if a == b && a <= STATE_ONLINE => Ok(()),
        (STATE_INIT, STATE_OFFLINE)
        | (STATE_OFFLINE, STATE_ONLINE)
        | (STATE_ONLINE, STATE_OFFLINE)
        | (STATE_OFFLINE, STATE_INIT) => Ok(()),
        _ => Err(EINVAL),
    }
}

/// Whether attributes other than the state may be set: in OFFLINE, or on
/// the way from INIT to OFFLINE (ONLINE profiles are not modified here:
/// the device advertises no MODIFY_ONLINE).
fn may_configure(from: u32, to: u32) -> bool {
    from == STATE_OFFLINE || (from == STATE_INIT && to == STATE_OFFLINE)
}

fn width_mask(width: u32) -> u32 {
    if width >= 32 {
        u32::MAX
    } else {
        (1u32 << width) - 1
    }
}

/// Lay the low bits of `bits` into the set bits of `mask`, lowest first.
fn deposit(bits: u32, mask: u32) -> u32 {
    let (mut out, mut k, mut m) = (0u32, 0u32, mask);
    while m != 0 {
        let low = m & m.wrapping_neg();
        if bits >> k & 1 != 0 {
            out |= low;
        }
        k += 1;
        m &= m - 1;
    }
    out
}

/// The rules of an EV profile's fields against its format's widths.
fn check_fields(fields: &[EvField], widths: &[u8]) -> Result<(), c_int> {
    if fields.len() > widths.len() {
        return Err(E2BIG);
    }
    for (f, &w) in fields.iter().zip(widths) {
        let in_width = width_mask(f.width);
        let mask_max = width_mask(f.mask.count_ones());
        if f.width == 0
            || f.width > u32::from(w)
            || f.init_val & !in_width != 0
            || f.mask & !in_width != 0
            || f.max_val > mask_max
            || f.min_val > f.max_val
        {
            return Err(EINVAL);
        }
    }
    Ok(())
}

/// The fields' parts laid into the format's fields (first most
/// significant), zero-filled where the format's field is wider or has no
/// EV field.
fn pack(parts: &[u32], widths: &[u8]) -> u32 {
    let total: u32 = widths.iter().map(|&w| u32::from(w)).sum();
    let mut v = 0u64;
    let mut used = 0u32;
    for (i, &w) in widths.iter().enumerate() {
        used += u32::from(w);
        let part = parts.get(i).copied().unwrap_or(0);
        v |= u64::from(part) << (total - used);
    }
    v as u32
}

/// Explicit EV `value` expanded through `fields` into the format of
/// `widths`: the EV's bits, most significant first, fill the fields'
/// masks in field order (as many as each mask has bits; within a field
/// the first of them its highest), each laid into its mask over the
/// field's `init_val` (lowest mask bit first), and the fields packed as
/// [`pack`] does. `None`: the EV has bits beyond those the masks take.
pub fn expand(fields: &[EvField], widths: &[u8], value: u32) -> Option<u32> {
    let bits: u32 = fields.iter().map(|f| f.mask.count_ones()).sum();
    if bits < u32::BITS && value >> bits != 0 {
        return None;
    }
    let mut left = bits;
    let parts: Vec<u32> = fields
        .iter()
        .map(|f| {
            let n = f.mask.count_ones();
            left -= n;
            let taken = if n == 0 {
                0
            } else {
                (u64::from(value) >> left) as u32 & width_mask(n)
            };
            (f.init_val & !f.mask) | deposit(taken, f.mask)
        })
        .collect();
    Some(pack(&parts, widths))
}

/// The first `count` EVs the fields generate: each field's generated part
/// runs from its min_val to its max_val (the last field fastest), laid
/// into its mask over its init_val; the fields sit in the format's fields
/// (first field most significant), zero-filled where the format's field
/// is wider or has no EV field.
fn generate(fields: &[EvField], widths: &[u8], count: u32) -> Result<Vec<u32>, c_int> {
    let spans: Vec<u64> = fields
        .iter()
        .map(|f| {
            if f.mask == 0 {
                1
            } else {
                u64::from(f.max_val - f.min_val) + 1
            }
        })
        .collect();
    let combos = spans
        .iter()
        .try_fold(1u64, |a, &s| a.checked_mul(s))
        .unwrap_or(u64::MAX);
    if u64::from(count) > combos {
        return Err(EINVAL);
    }
    let mut out = Vec::with_capacity(count as usize);
    for k in 0..u64::from(count) {
        let mut rest = k;
        let mut parts = vec![0u32; fields.len()];
        for (i, f) in fields.iter().enumerate().rev() {
            let g = (rest % spans[i]) as u32;
            rest /= spans[i];
            parts[i] = if f.mask == 0 {
                f.init_val
            } else {
                (f.init_val & !f.mask) | deposit(f.min_val + g, f.mask)
            };
        }
        out.push(pack(&parts, widths));
    }
    Ok(out)
}

/// An EV value the device carries on its port: 1 .. 2^width - 1 (0 is
/// the driver's unused slot), port 1.
fn check_ev(e: Ev, width: u32) -> Result<(), c_int> {
    if e.port != u32::from(PORT) || e.value == 0 || e.value > width_mask(width.min(EV_WIDTH)) {
        return Err(EINVAL);
    }
    Ok(())
}

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

    /// Total width of format `id` if it is ONLINE-able (configured).
    fn format_width(&self, id: u64) -> Option<(u32, Vec<u8>, u32)> {
        let f = self.formats.get(&id)?;
        Some((f.widths.iter().map(|&w| u32::from(w)).sum(), f.widths.clone(), f.state))
    }

    /// EVs the profiles take together (for `ev_free_count`).
    pub fn evs_in_use(&self) -> u32 {
        self.ev.values().map(|p| p.ev_count).sum()
    }

    /// Modify EV format profile `id` as `r` asks (`widths`: the fields,
    /// when `r.set` has `SET_FIELDS`).
    pub fn modify_fmt(&mut self, id: u64, r: &FmtReq, widths: &[u8]) -> Result<(), c_int> {
        profile_id(id)?;
        let mut p = self.formats.get(&id).cloned().unwrap_or_default();
        let to = if r.set & SET_STATE != 0 { r.state } else { p.state };
        check_transition(p.state, to)?;
        let config = r.set & (SET_MODE | SET_FIELDS);
        if config != 0 && !may_configure(p.state, to) {
            return Err(EINVAL);
        }
        if p.state == STATE_INIT && to == STATE_OFFLINE {
            p = FmtProfile::default();
            if r.set & SET_MODE == 0 {
                return Err(EINVAL);
            }
        }
        if r.set & SET_MODE != 0 {
            if r.mode != FMT_MODE_UDP {
                return Err(EINVAL);
            }
            p.mode = r.mode;
        }
        if r.set & SET_FIELDS != 0 {
            let total: u32 = widths.iter().map(|&w| u32::from(w)).sum();
            if widths.is_empty() || widths.contains(&0) {
                return Err(EINVAL);
            }
            if widths.len() > MAX_EV_FIELDS || total > EV_WIDTH {
                return Err(E2BIG);
            }
            p.widths = widths.to_vec();
        }
        // EV profiles that name it: ONLINE ones hold it ONLINE and
        // configured, any that is not INIT holds it out of INIT.
        let users_online = self.ev.values().any(|e| e.format == id && e.state == STATE_ONLINE);
        let users = self.ev.values().any(|e| e.format == id && e.mode != EV_MODE_AUTO);
        if users_online && (to != STATE_ONLINE || config != 0) {
            return Err(EBUSY);
        }
        if to == STATE_INIT && users && p.state != STATE_INIT {
            return Err(EBUSY);
        }
        if to == STATE_ONLINE && p.widths.is_empty() {
            return Err(EINVAL);
        }
        if to == STATE_INIT {
            self.formats.remove(&id);
            return Ok(());
        }
        p.state = to;
        self.formats.insert(id, p);
        Ok(())
    }

    pub fn query_fmt(&self, id: u64) -> Result<FmtProfile, c_int> {
        profile_id(id)?;
        Ok(self.formats.get(&id).cloned().unwrap_or_default())
    }

    /// Modify EV profile `id`. `entries` and `fields` are the operations'
    /// arrays (in and out; `n_entries` / `n_fields` set to the number
    /// filled or needed). Returns the EV state changes (value, state) to
    /// make on the QPs bound to the profile.
    pub fn modify_ev(
        &mut self,
        id: u64,
        r: &EvReq,
        entries: &mut [EvEntry],
        n_entries: &mut u32,
        fields: &mut [EvField],
        n_fields: &mut u32,
    ) -> Result<Vec<(u16, u32)>, c_int> {
        let key = profile_id(id)?;
        let mut p = self.ev.get(&key).cloned().unwrap_or_default();
        let from = p.state;
        let to = if r.set & SET_STATE != 0 { r.state } else { from };
        check_transition(from, to)?;
        let set_fields = if r.fields_op == FIELDS_OP_MODIFY { SET_FIELDS } else { 0 };
        let config = (r.set & (SET_MODE | SET_FORMAT | SET_COUNT | SET_MIN_ACTIVE | SET_EVENT_MASK)) | set_fields;
        if config != 0 && !may_configure(from, to) {
            return Err(EINVAL);
        }
        if from == STATE_INIT && to == STATE_OFFLINE {
            p = EvProfile::default();
            let need_fmt = r.mode != EV_MODE_AUTO;
            if r.set & SET_MODE == 0
                || need_fmt && r.set & (SET_FORMAT | SET_COUNT) != SET_FORMAT | SET_COUNT
                || r.mode == EV_MODE_GEN && config & SET_FIELDS == 0
            {
                return Err(EINVAL);
            }
        }
        if r.set & SET_MODE != 0 {
            if ![EV_MODE_AUTO, EV_MODE_EXP, EV_MODE_GEN].contains(&r.mode) {
                return Err(EINVAL);
            }
            if r.mode != p.mode {
                p.evs.clear();
                p.states.clear();
            }
            p.mode = r.mode;
            if p.mode == EV_MODE_AUTO && r.set & SET_COUNT == 0 && p.ev_count == 0 {
                p.ev_count = MAX_EVS;
            }
        }
        if r.set & SET_FORMAT != 0 {
            p.format = r.format;
        }
        if r.set & SET_COUNT != 0 {
            if r.ev_count == 0 || r.ev_count > MAX_EVS {
                return Err(EINVAL);
            }
            p.ev_count = r.ev_count;
        }
        if r.set & SET_MIN_ACTIVE != 0 {
            p.ev_min_active = r.ev_min_active;
            p.min_active_set = true;
        }
        if r.set & SET_EVENT_MASK != 0 {
            if r.event_mask & !EVENT_MASK_STATES != 0 {
                return Err(EINVAL);
            }
            p.event_mask = r.event_mask;
            p.event_mask_set = true;
        }
        if config & SET_FIELDS != 0 {
            let n = *n_fields as usize;
            if n > MAX_EV_FIELDS {
                return Err(E2BIG);
            }
            p.fields = fields.get(..n).ok_or(EINVAL)?.to_vec();
        }
        // The configuration as a whole, when it changes or the profile
        // goes ONLINE (its format may have changed meanwhile); a query or
        // a move down is never refused for it.
        let going_up = (from == STATE_INIT || from == STATE_OFFLINE) && to == from + 1;
        if config != 0 || going_up {
            self.check_ev_config(&mut p)?;
        }
        if from == STATE_INIT && to == STATE_OFFLINE {
            p.state = STATE_OFFLINE;
        }
        // The operations.
        let mut changes = Vec::new();
        match r.ev_op {
            EV_OP_NONE => {}
            EV_OP_REPLACE => {
                if p.state != STATE_OFFLINE || p.mode != EV_MODE_EXP {
                    return Err(EINVAL);
                }
                let width = self.format_width(p.format).map_or(EV_WIDTH, |f| f.0);
                let n = (*n_entries as usize).min(entries.len());
                for e in &entries[..n] {
                    if e.ev_new != UNPOPULATED {
                        check_ev(e.ev_new, width)?;
                    }
                    if e.state != EV_GOOD && e.state != EV_DENIED {
                        return Err(EINVAL);
                    }
                    let all = e.flags & F_ALL_COPIES != 0;
                    let mut found = false;
                    for i in 0..p.evs.len() {
                        if p.evs[i] == e.ev {
                            p.evs[i] = e.ev_new;
                            p.states[i] = e.state;
                            found = true;
                            if !all {
                                break;
                            }
                        }
                    }
                    if !found {
                        return Err(ENOENT);
                    }
                }
                // One socket per source port: an EV appears once.
                let mut vals: Vec<u32> = p.evs.iter().filter(|e| **e != UNPOPULATED).map(|e| e.value).collect();
                let len = vals.len();
                vals.sort_unstable();
                vals.dedup();
                if vals.len() != len {
                    return Err(EINVAL);
                }
            }
            EV_OP_MODIFY_STATE => {
                if p.state == STATE_INIT || p.mode == EV_MODE_AUTO {
                    return Err(EINVAL);
                }
                let n = (*n_entries as usize).min(entries.len());
                for e in &entries[..n] {
                    // ASSUMED_BAD is the NIC's verdict, not a controller's.
                    if e.state != EV_GOOD && e.state != EV_DENIED {
                        return Err(EINVAL);
                    }
                    let at = p
                        .evs
                        .iter()
                        .position(|x| *x == e.ev && *x != UNPOPULATED)
                        .ok_or(ENOENT)?;
                    p.states[at] = e.state;
                    changes.push((p.wire_value(at), e.state));
                    // Set on every bound QP (denied, then allowed: GOOD
                    // again there), whatever its NIC had found.
                    self.nic_marks.remove(&(key, e.ev.value as u16));
                }
            }
            EV_OP_QUERY_STATE => {
                let n = (*n_entries as usize).min(entries.len());
                for e in entries[..n].iter_mut() {
                    let at = p.evs.iter().position(|x| *x == e.ev).ok_or(ENOENT)?;
                    e.state = if p.evs[at] == UNPOPULATED {
                        EV_UNKNOWN
                    } else if p.states[at] == EV_GOOD && self.nic_marked(key, e.ev.value as u16) {
                        // The controller allows it; a bound QP's NIC
                        // found it bad.
                        EV_ASSUMED_BAD
                    } else {
                        p.states[at]
                    };
                }
            }
            EV_OP_QUERY_ARRAY => {
                let need = p.evs.len();
                let cap = (*n_entries as usize).min(entries.len());
                *n_entries = need as u32;
                if need > cap {
                    return Err(E2BIG);
                }
                for (i, e) in entries[..need].iter_mut().enumerate() {
                    *e = EvEntry {
                        ev: p.evs[i],
                        state: if p.evs[i] == UNPOPULATED {
                            EV_UNKNOWN
                        } else {
                            p.states[i]
                        },
                        ..EvEntry::default()
                    };
                }
            }
            _ => return Err(EINVAL),
        }
        if r.fields_op == FIELDS_OP_QUERY {
            let need = p.fields.len();
            let cap = (*n_fields as usize).min(fields.len());
            *n_fields = need as u32;
            if need > cap {
                return Err(E2BIG);
            }
            fields[..need].copy_from_slice(&p.fields);
        } else if r.fields_op != FIELDS_OP_NONE && r.fields_op != FIELDS_OP_MODIFY {
            return Err(EINVAL);
        }
        // The last move.
        match (p.state, to) {
            (STATE_OFFLINE, STATE_ONLINE) => {
                let fmt_online =
                    p.mode == EV_MODE_AUTO || self.format_width(p.format).is_some_and(|f| f.2 == STATE_ONLINE);
                if !p.min_active_set || !p.event_mask_set || !fmt_online || p.evs.contains(&UNPOPULATED) {
                    return Err(EINVAL);
                }
                p.wire = self.expansions(&p)?;
            }
            (STATE_ONLINE, STATE_OFFLINE) | (STATE_OFFLINE, STATE_INIT) if p.users > 0 => return Err(EBUSY),
            // OFFLINE, its EVs may be replaced: expanded again on the way up.
            (STATE_ONLINE, STATE_OFFLINE) => p.wire.clear(),
            _ => {}
        }
        if to == STATE_INIT {
            self.ev.remove(&key);
            return Ok(changes);
        }
        p.state = to;
        self.ev.insert(key, p);
        Ok(changes)
    }

    /// The values an EXPLICIT profile with fields carries: each EV
    /// expanded ([`expand`]); `EINVAL` for an EV with bits beyond the
    /// masks', or one that expands to 0 (no source port) or to a value
    /// another EV has. None for the other profiles.
    fn expansions(&self, p: &EvProfile) -> Result<Vec<u32>, c_int> {
        if p.mode != EV_MODE_EXP || p.fields.is_empty() {
            return Ok(Vec::new());
        }
        let (_, widths, _) = self.format_width(p.format).ok_or(EINVAL)?;
        let wire = p
            .evs
            .iter()
            .map(|e| expand(&p.fields, &widths, e.value).filter(|&v| v != 0).ok_or(EINVAL))
            .collect::<Result<Vec<u32>, c_int>>()?;
        let mut seen = wire.clone();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != wire.len() {
            return Err(EINVAL);
        }
        Ok(wire)
    }

    /// The whole configuration of `p`: a format that exists and is not
    /// INIT (non-AUTO), fields that fit it, a count the device takes, a
    /// floor within the count; GENERATED arrays made from the fields,
    /// EXPLICIT ones sized to the count (new entries not yet given).
    fn check_ev_config(&self, p: &mut EvProfile) -> Result<(), c_int> {
        if p.ev_count == 0 || p.ev_count > MAX_EVS || p.ev_min_active > p.ev_count {
            return Err(EINVAL);
        }
        if p.mode == EV_MODE_AUTO {
            return Ok(());
        }
        let Some((width, widths, fstate)) = self.format_width(p.format) else {
            return Err(EINVAL);
        };
        if fstate == STATE_INIT {
            return Err(EINVAL);
        }
        check_fields(&p.fields, &widths)?;
        let total: u32 = p.fields.iter().map(|f| f.width).sum();
        if total > width {
            return Err(EINVAL);
        }
        match p.mode {
            EV_MODE_GEN => {
                let vals = generate(&p.fields, &widths, p.ev_count)?;
                if vals.contains(&0) {
                    return Err(EINVAL);
                }
                let keep: HashMap<u32, u32> = p.evs.iter().zip(&p.states).map(|(e, &s)| (e.value, s)).collect();
                p.states = vals.iter().map(|v| keep.get(v).copied().unwrap_or(EV_GOOD)).collect();
                p.evs = vals
                    .into_iter()
                    .map(|value| Ev {
                        value,
                        port: u32::from(PORT),
                    })
                    .collect();
            }
            _ => {
                p.evs.resize(p.ev_count as usize, UNPOPULATED);
                p.states.resize(p.ev_count as usize, EV_GOOD);
                if p.evs.iter().any(|e| *e != UNPOPULATED && check_ev(*e, width).is_err()) {
                    return Err(EINVAL);
                }
            }
        }
        Ok(())
    }

    pub fn query_ev(&self, id: u64) -> Result<EvProfile, c_int> {
        let key = profile_id(id)?;
        Ok(self.ev.get(&key).cloned().unwrap_or_default())
    }

    pub fn modify_cc(&mut self, id: u64, r: &CcReq, config: &[u8]) -> Result<(), c_int> {
        let key = profile_id(id)?;
        let mut p = self.cc.get(&key).cloned().unwrap_or_default();
        let from = p.state;
        let to = if r.set & SET_STATE != 0 { r.state } else { from };
        check_transition(from, to)?;
        let set = r.set & (SET_ALGORITHM | SET_CONFIG);
        if set != 0 && !may_configure(from, to) {
            return Err(EINVAL);
        }
        if from == STATE_INIT && to == STATE_OFFLINE {
            p = CcProfile::default();
            if r.set & SET_ALGORITHM == 0 {
                return Err(EINVAL);
            }
        }
        if r.set & SET_ALGORITHM != 0 {
            if r.algorithm != CC_NONE && r.algorithm != CC_NSCC {
                return Err(EINVAL);
            }
            if r.algorithm != p.algorithm {
                p.config = None;
            }
            p.algorithm = r.algorithm;
            p.algorithm_set = true;
        }
        if r.set & SET_CONFIG != 0 {
            if p.algorithm != CC_NSCC || r.max_cwnd == 0 {
                return Err(EINVAL);
            }
            // SAFETY: null or the C layer's parameters.
            let nscc = unsafe { r.nscc.as_ref() }.copied().unwrap_or_default();
            p.nscc = nscc.params()?;
            p.config = Some(config.to_vec());
            p.max_cwnd = r.max_cwnd;
        }
        match (from, to) {
            (STATE_OFFLINE, STATE_ONLINE) if p.algorithm == CC_NSCC && p.config.is_none() => return Err(EINVAL),
            (STATE_ONLINE, STATE_OFFLINE) | (STATE_OFFLINE, STATE_INIT) if p.users > 0 => return Err(EBUSY),
            _ => {}
        }
        if to == STATE_INIT {
            self.cc.remove(&key);
            return Ok(());
        }
        p.state = to;
        self.cc.insert(key, p);
        Ok(())
    }

    /// Bind a QP moving to INIT to profiles, which must be ONLINE (an id
    /// that names no configured profile: ENOENT).
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

    /// Whether the NIC marked EV `value` of profile `id` ASSUMED_BAD on
    /// a QP bound to it.
    fn nic_marked(&self, id: u32, value: u16) -> bool {
        self.nic_marks.get(&(id, value)).is_some_and(|q| !q.is_empty())
    }

    /// QP `qpn`, bound to profile `id`, has EV `value` in `state` now (an
    /// EV event of its NIC's).
    pub fn note_ev_state(&mut self, id: u32, qpn: u32, value: u16, state: u32) {
        if state == EV_ASSUMED_BAD {
            self.nic_marks.entry((id, value)).or_default().insert(qpn);
        } else if let Some(q) = self.nic_marks.get_mut(&(id, value)) {
            q.remove(&qpn);
            if q.is_empty() {
                self.nic_marks.remove(&(id, value));
            }
        }
    }

    /// QP `qpn` leaves its profiles: its NIC's marks count no more.
    pub fn forget_marks(&mut self, qpn: u32) {
        self.nic_marks.retain(|_, q| {
            q.remove(&qpn);
            !q.is_empty()
        });
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

fn request_id(r: &driver::device::EndpointResult) -> u16 {
    use driver::device::EndpointResult as R;
    match *r {
        R::EvProbe { request_id, .. } | R::PortStatus { request_id, .. } | R::TimedOut { request_id, .. } => request_id,
    }
}

/// Deny (`state` DENIED) or allow (GOOD) EV `ev` on `qp`.
pub fn set_ev_state(c: &Controller, qp: &QueuePair, ev: u16, state: u32) -> Result<(), c_int> {
    match state {
        // The UDP format's 16 bits: the driver's 32-bit EV with the
        // flow-label half 0.
        EV_DENIED => c.deny(qp, u32::MAX, u32::from(ev)),
        EV_GOOD => c.allow(qp, u32::MAX, u32::from(ev)),
        _ => return Err(EINVAL),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt_req(set: u32, state: u32) -> FmtReq {
        FmtReq {
            set,
            state,
            mode: FMT_MODE_UDP,
            n_widths: 0,
            widths: std::ptr::null(),
        }
    }

    fn ev_req(set: u32, state: u32, mode: u32) -> EvReq {
        EvReq {
            set,
            state,
            mode,
            ev_count: 4,
            format: 1,
            ev_min_active: 1,
            event_mask: EV_GOOD | EV_ASSUMED_BAD,
            ev_op: EV_OP_NONE,
            fields_op: FIELDS_OP_NONE,
        }
    }

    /// Format 1: UDP, fields 8 + 8, ONLINE.
    fn with_format() -> Ctl {
        let mut c = Ctl::default();
        c.modify_fmt(1, &fmt_req(SET_STATE | SET_MODE | SET_FIELDS, STATE_OFFLINE), &[8, 8])
            .unwrap();
        c.modify_fmt(1, &fmt_req(SET_STATE, STATE_ONLINE), &[]).unwrap();
        c
    }

    fn modify(c: &mut Ctl, id: u64, r: &EvReq, entries: &mut [EvEntry]) -> Result<Vec<(u16, u32)>, c_int> {
        let mut n = entries.len() as u32;
        let mut nf = 0;
        c.modify_ev(id, r, entries, &mut n, &mut [], &mut nf)
    }

    fn ev(value: u32) -> Ev {
        Ev { value, port: 1 }
    }

    #[test]
    fn format_profiles_follow_their_state_machine() {
        let mut c = Ctl::default();
        assert_eq!(
            c.modify_fmt(0, &fmt_req(SET_STATE | SET_MODE, STATE_OFFLINE), &[]),
            Err(EINVAL)
        );
        assert_eq!(
            c.modify_fmt(MAX_PROFILES + 1, &fmt_req(SET_STATE | SET_MODE, STATE_OFFLINE), &[]),
            Err(EINVAL)
        );
        // INIT -> ONLINE, OFFLINE without a mode, a mode the device lacks.
        assert_eq!(c.modify_fmt(2, &fmt_req(SET_STATE, STATE_ONLINE), &[]), Err(EINVAL));
        assert_eq!(c.modify_fmt(2, &fmt_req(SET_STATE, STATE_OFFLINE), &[]), Err(EINVAL));
        let stev = FmtReq {
            mode: 1,
            ..fmt_req(SET_STATE | SET_MODE, STATE_OFFLINE)
        };
        assert_eq!(c.modify_fmt(2, &stev, &[]), Err(EINVAL));
        c.modify_fmt(2, &fmt_req(SET_STATE | SET_MODE, STATE_OFFLINE), &[])
            .unwrap();
        // ONLINE needs fields; 17 bits are more than a source port.
        assert_eq!(c.modify_fmt(2, &fmt_req(SET_STATE, STATE_ONLINE), &[]), Err(EINVAL));
        assert_eq!(c.modify_fmt(2, &fmt_req(SET_FIELDS, 0), &[8, 9]), Err(E2BIG));
        assert_eq!(c.modify_fmt(2, &fmt_req(SET_FIELDS, 0), &[8, 0]), Err(EINVAL));
        c.modify_fmt(2, &fmt_req(SET_FIELDS, 0), &[4, 12]).unwrap();
        c.modify_fmt(2, &fmt_req(SET_STATE, STATE_ONLINE), &[]).unwrap();
        // ONLINE: only back to OFFLINE.
        assert_eq!(c.modify_fmt(2, &fmt_req(SET_FIELDS, 0), &[8]), Err(EINVAL));
        assert_eq!(c.modify_fmt(2, &fmt_req(SET_STATE, STATE_INIT), &[]), Err(EINVAL));
        assert_eq!(c.query_fmt(2).unwrap().widths, vec![4, 12]);
        c.modify_fmt(2, &fmt_req(SET_STATE, STATE_OFFLINE), &[]).unwrap();
        c.modify_fmt(2, &fmt_req(SET_STATE, STATE_INIT), &[]).unwrap();
        assert_eq!(c.query_fmt(2).unwrap().state, STATE_INIT);
    }

    #[test]
    fn explicit_profiles_go_online_once_every_ev_is_given_and_stay_while_bound() {
        let mut c = with_format();
        let all = SET_STATE | SET_MODE | SET_FORMAT | SET_COUNT | SET_MIN_ACTIVE | SET_EVENT_MASK;
        // A floor above the count; DENIED in the event mask; no format.
        let r = EvReq {
            ev_min_active: 5,
            ..ev_req(all, STATE_OFFLINE, EV_MODE_EXP)
        };
        assert_eq!(modify(&mut c, 1, &r, &mut []), Err(EINVAL));
        let r = EvReq {
            event_mask: EV_DENIED,
            ..ev_req(all, STATE_OFFLINE, EV_MODE_EXP)
        };
        assert_eq!(modify(&mut c, 1, &r, &mut []), Err(EINVAL));
        let r = EvReq {
            format: 9,
            ..ev_req(all, STATE_OFFLINE, EV_MODE_EXP)
        };
        assert_eq!(modify(&mut c, 1, &r, &mut []), Err(EINVAL));
        modify(&mut c, 1, &ev_req(all, STATE_OFFLINE, EV_MODE_EXP), &mut []).unwrap();
        assert_eq!(c.ev[&1].evs, vec![UNPOPULATED; 4]);
        // Not ONLINE before every EV is given.
        assert_eq!(
            modify(&mut c, 1, &ev_req(SET_STATE, STATE_ONLINE, 0), &mut []),
            Err(EINVAL)
        );
        let replace = |v: u32| EvEntry {
            ev: UNPOPULATED,
            ev_new: ev(v),
            state: EV_GOOD,
            flags: 0,
        };
        let op = EvReq {
            ev_op: EV_OP_REPLACE,
            ..ev_req(0, 0, 0)
        };
        // A value twice, a value beyond the format's 16 bits, value 0.
        assert_eq!(modify(&mut c, 1, &op, &mut [replace(7), replace(7)]), Err(EINVAL));
        assert_eq!(modify(&mut c, 1, &op, &mut [replace(0x1_0000)]), Err(EINVAL));
        let mut zero = replace(0);
        zero.ev_new.port = 1;
        assert_eq!(modify(&mut c, 1, &op, &mut [zero]), Err(EINVAL));
        modify(&mut c, 1, &op, &mut [replace(0xD001), replace(0xD003), replace(0xD005)]).unwrap();
        // An EV the array does not hold.
        let missing = EvEntry {
            ev: ev(0xBEEF),
            ..replace(0xD007)
        };
        assert_eq!(modify(&mut c, 1, &op, &mut [missing]), Err(ENOENT));
        modify(&mut c, 1, &op, &mut [replace(0xD007)]).unwrap();
        let b0 = c.bind(Some(1), None);
        assert_eq!(b0.unwrap_err(), EINVAL); // OFFLINE
        modify(&mut c, 1, &ev_req(SET_STATE, STATE_ONLINE, 0), &mut []).unwrap();
        let b = c.bind(Some(1), None).unwrap();
        assert_eq!(c.ev[&1].values_for(3), vec![0xD001, 0xD003, 0xD005, 0xD007]);
        // Bound: not OFFLINE; its format neither; ONLINE: no replacement.
        assert_eq!(
            modify(&mut c, 1, &ev_req(SET_STATE, STATE_OFFLINE, 0), &mut []),
            Err(EBUSY)
        );
        assert_eq!(c.modify_fmt(1, &fmt_req(SET_STATE, STATE_OFFLINE), &[]), Err(EBUSY));
        assert_eq!(modify(&mut c, 1, &op, &mut [replace(0xD009)]), Err(EINVAL));
        // The controller's state of an EV: recorded, and returned to make.
        let deny = EvReq {
            ev_op: EV_OP_MODIFY_STATE,
            ..ev_req(0, 0, 0)
        };
        let e = EvEntry {
            ev: ev(0xD003),
            ev_new: UNPOPULATED,
            state: EV_DENIED,
            flags: 0,
        };
        assert_eq!(modify(&mut c, 1, &deny, &mut [e]).unwrap(), vec![(0xD003, EV_DENIED)]);
        assert_eq!(c.ev[&1].denied_values(), vec![0xD003]);
        let bad = EvEntry {
            state: EV_ASSUMED_BAD,
            ..e
        };
        assert_eq!(modify(&mut c, 1, &deny, &mut [bad]), Err(EINVAL));
        // QUERY_EV_STATE: the controller's DENIED, and ASSUMED_BAD where a
        // bound QP's NIC marked an EV the controller allows, until the
        // NIC says GOOD again, the QP leaves, or the controller sets it.
        let query = |c: &mut Ctl| {
            let q = EvReq {
                ev_op: EV_OP_QUERY_STATE,
                ..ev_req(0, 0, 0)
            };
            let mut es: Vec<EvEntry> = [0xD001, 0xD003, 0xD005]
                .into_iter()
                .map(|v| EvEntry { ev: ev(v), ..e })
                .collect();
            modify(c, 1, &q, &mut es).unwrap();
            es.iter().map(|e| e.state).collect::<Vec<_>>()
        };
        assert_eq!(query(&mut c), vec![EV_GOOD, EV_DENIED, EV_GOOD]);
        c.note_ev_state(1, 3, 0xD005, EV_ASSUMED_BAD);
        c.note_ev_state(1, 4, 0xD005, EV_ASSUMED_BAD);
        c.note_ev_state(1, 3, 0xD003, EV_ASSUMED_BAD);
        assert_eq!(query(&mut c), vec![EV_GOOD, EV_DENIED, EV_ASSUMED_BAD]);
        c.note_ev_state(1, 3, 0xD005, EV_GOOD);
        assert_eq!(
            query(&mut c),
            vec![EV_GOOD, EV_DENIED, EV_ASSUMED_BAD],
            "QP 4's mark stays"
        );
        c.forget_marks(4);
        assert_eq!(query(&mut c), vec![EV_GOOD, EV_DENIED, EV_GOOD]);
        c.note_ev_state(1, 3, 0xD001, EV_ASSUMED_BAD);
        let allow = EvEntry {
            ev: ev(0xD001),
            state: EV_GOOD,
            ..e
        };
        modify(&mut c, 1, &deny, &mut [allow]).unwrap();
        assert_eq!(
            query(&mut c),
            vec![EV_GOOD, EV_DENIED, EV_GOOD],
            "set GOOD by the controller"
        );
        c.unbind(&b);
        modify(&mut c, 1, &ev_req(SET_STATE, STATE_OFFLINE, 0), &mut []).unwrap();
        modify(&mut c, 1, &ev_req(SET_STATE, STATE_INIT, 0), &mut []).unwrap();
        assert_eq!(c.bind(Some(1), None).unwrap_err(), ENOENT);
    }

    #[test]
    fn explicit_evs_expand_through_the_profiles_fields() {
        let field = |width, init_val, mask| EvField {
            width,
            init_val,
            min_val: 0,
            max_val: 0,
            mask,
        };
        let two = [field(8, 0, 0xFF), field(8, 0xA0, 0x0F)];
        // 12 mask bits: the first field takes the EV's top 8, the second
        // its low 4 under its init_val's high nibble.
        assert_eq!(expand(&two, &[8, 8], 0x123), Some(0x12A3));
        assert_eq!(expand(&two, &[8, 8], 0x1000), None, "a bit beyond the masks");
        // A mask's bits need not be contiguous: the EV's low bit goes to
        // the mask's lowest, over init_val elsewhere.
        assert_eq!(expand(&[field(4, 0b0101, 0b1010)], &[4], 0b10), Some(0b1101));
        // A format field wider than the EV field: zero-filled above it.
        assert_eq!(expand(&[field(4, 0, 0xF)], &[8, 8], 0x5), Some(0x0500));
        // A fixed field (no mask) is its init_val, and takes no EV bits.
        assert_eq!(
            expand(&[field(8, 0xC0, 0), field(8, 0, 0xFF)], &[8, 8], 0x42),
            Some(0xC042)
        );

        // A profile with fields carries the expansions, and the
        // controller's states reach the QPs by them; its events name the
        // EVs of the array.
        let mut c = with_format();
        let all = SET_STATE | SET_MODE | SET_FORMAT | SET_COUNT | SET_MIN_ACTIVE | SET_EVENT_MASK;
        let r = EvReq {
            ev_count: 2,
            fields_op: FIELDS_OP_MODIFY,
            ..ev_req(all, STATE_OFFLINE, EV_MODE_EXP)
        };
        let mut fields = [field(8, 0xC0, 0), field(8, 0, 0xFF)];
        let mut nf = fields.len() as u32;
        c.modify_ev(1, &r, &mut [], &mut 0, &mut fields, &mut nf).unwrap();
        let replace = |v: u32| EvEntry {
            ev: UNPOPULATED,
            ev_new: ev(v),
            state: EV_GOOD,
            flags: 0,
        };
        let op = EvReq {
            ev_op: EV_OP_REPLACE,
            ..ev_req(0, 0, 0)
        };
        // 0x142 has a bit beyond the 8 the masks take: not ONLINE.
        modify(&mut c, 1, &op, &mut [replace(0x12), replace(0x142)]).unwrap();
        assert_eq!(
            modify(&mut c, 1, &ev_req(SET_STATE, STATE_ONLINE, 0), &mut []),
            Err(EINVAL)
        );
        let fix = EvEntry {
            ev: ev(0x142),
            ..replace(0x34)
        };
        modify(&mut c, 1, &op, &mut [fix]).unwrap();
        modify(&mut c, 1, &ev_req(SET_STATE, STATE_ONLINE, 0), &mut []).unwrap();
        assert_eq!(c.ev[&1].values_for(7), vec![0xC012, 0xC034]);
        assert_eq!(c.ev[&1].ev_at(1), Some(0x34));
        let deny = EvReq {
            ev_op: EV_OP_MODIFY_STATE,
            ..ev_req(0, 0, 0)
        };
        let e = EvEntry {
            ev: ev(0x34),
            ev_new: UNPOPULATED,
            state: EV_DENIED,
            flags: 0,
        };
        assert_eq!(modify(&mut c, 1, &deny, &mut [e]).unwrap(), vec![(0xC034, EV_DENIED)]);
        assert_eq!(c.ev[&1].denied_values(), vec![0xC034]);
    }

    #[test]
    fn a_format_changed_under_an_offline_profile_stops_it_going_online_not_its_queries() {
        let mut c = with_format();
        let all = SET_STATE | SET_MODE | SET_FORMAT | SET_COUNT | SET_MIN_ACTIVE | SET_EVENT_MASK;
        let mut fields = [
            EvField {
                width: 8,
                init_val: 0xC1,
                ..EvField::default()
            },
            EvField {
                width: 8,
                min_val: 1,
                max_val: 4,
                mask: 0x0F,
                ..EvField::default()
            },
        ];
        let r = EvReq {
            fields_op: FIELDS_OP_MODIFY,
            ..ev_req(all, STATE_OFFLINE, EV_MODE_GEN)
        };
        c.modify_ev(3, &r, &mut [], &mut 0, &mut fields, &mut 2).unwrap();
        c.modify_fmt(1, &fmt_req(SET_STATE, STATE_OFFLINE), &[]).unwrap();
        c.modify_fmt(1, &fmt_req(SET_FIELDS, 0), &[8]).unwrap(); // one field now
        c.modify_fmt(1, &fmt_req(SET_STATE, STATE_ONLINE), &[]).unwrap();
        let q = EvReq {
            ev_op: EV_OP_QUERY_ARRAY,
            ..ev_req(0, 0, 0)
        };
        let mut arr = [EvEntry::default(); 4];
        c.modify_ev(3, &q, &mut arr, &mut 4, &mut [], &mut 0).unwrap();
        assert_eq!(
            modify(&mut c, 3, &ev_req(SET_STATE, STATE_ONLINE, 0), &mut []),
            Err(E2BIG)
        );
        modify(&mut c, 3, &ev_req(SET_STATE, STATE_INIT, 0), &mut []).unwrap();
    }

    #[test]
    fn generated_profiles_expand_their_fields_into_the_format() {
        let mut c = with_format();
        // High byte fixed 0xC1, low byte generated 4..=7 in its low bits.
        let mut fields = [
            EvField {
                width: 8,
                init_val: 0xC1,
                ..EvField::default()
            },
            EvField {
                width: 8,
                init_val: 0x10,
                min_val: 4,
                max_val: 7,
                mask: 0x0F,
            },
        ];
        let all = SET_STATE | SET_MODE | SET_FORMAT | SET_COUNT;
        let r = EvReq {
            fields_op: FIELDS_OP_MODIFY,
            ..ev_req(all, STATE_OFFLINE, EV_MODE_GEN)
        };
        let (mut n, mut nf) = (0, 2);
        c.modify_ev(2, &r, &mut [], &mut n, &mut fields, &mut nf).unwrap();
        assert_eq!(c.ev[&2].values_for(0), vec![0xC114, 0xC115, 0xC116, 0xC117]);
        // Five EVs from four combinations; a max_val wider than its mask.
        let r5 = EvReq {
            ev_count: 5,
            ..ev_req(SET_COUNT, 0, 0)
        };
        assert_eq!(c.modify_ev(2, &r5, &mut [], &mut n, &mut [], &mut 0), Err(EINVAL));
        let mut wide = fields;
        wide[1].max_val = 16;
        let rf = EvReq {
            fields_op: FIELDS_OP_MODIFY,
            ..ev_req(0, 0, 0)
        };
        assert_eq!(c.modify_ev(2, &rf, &mut [], &mut n, &mut wide, &mut 2), Err(EINVAL));
        // Queries: fields with a short array (E2BIG and the count), then
        // the array.
        let q = EvReq {
            fields_op: FIELDS_OP_QUERY,
            ..ev_req(0, 0, 0)
        };
        let mut one = [EvField::default()];
        let mut nf = 1;
        assert_eq!(c.modify_ev(2, &q, &mut [], &mut n, &mut one, &mut nf), Err(E2BIG));
        assert_eq!(nf, 2);
        let qa = EvReq {
            ev_op: EV_OP_QUERY_ARRAY,
            ..ev_req(0, 0, 0)
        };
        let mut arr = [EvEntry::default(); 4];
        let mut na = 4;
        c.modify_ev(2, &qa, &mut arr, &mut na, &mut [], &mut 0).unwrap();
        assert_eq!((na, arr[3].ev, arr[3].state), (4, ev(0xC117), EV_GOOD));
    }

    #[test]
    fn cc_profiles_need_nscc_and_its_parameters() {
        let mut c = Ctl::default();
        let req = |set, state, algorithm, max_cwnd| CcReq {
            set,
            state,
            algorithm,
            max_cwnd,
            config: std::ptr::null(),
            config_len: 0,
            nscc: std::ptr::null(),
        };
        assert_eq!(
            c.modify_cc(1, &req(SET_STATE, STATE_OFFLINE, CC_NSCC, 0), &[]),
            Err(EINVAL)
        );
        assert_eq!(
            c.modify_cc(1, &req(SET_STATE | SET_ALGORITHM, STATE_OFFLINE, 9, 0), &[]),
            Err(EINVAL)
        );
        c.modify_cc(1, &req(SET_STATE | SET_ALGORITHM, STATE_OFFLINE, CC_NSCC, 0), &[])
            .unwrap();
        assert_eq!(c.modify_cc(1, &req(SET_STATE, STATE_ONLINE, 0, 0), &[]), Err(EINVAL));
        assert_eq!(c.modify_cc(1, &req(SET_CONFIG, 0, 0, 0), &[1]), Err(EINVAL)); // max_cwnd 0
        c.modify_cc(1, &req(SET_CONFIG | SET_STATE, STATE_ONLINE, 0, 1 << 20), &[1, 2])
            .unwrap();
        assert_eq!(c.cc[&1].window(), Some((1 << 20, NsccParams::default())));
        let b = c.bind(None, Some(1)).unwrap();
        assert_eq!(c.modify_cc(1, &req(SET_STATE, STATE_OFFLINE, 0, 0), &[]), Err(EBUSY));
        c.unbind(&b);
        c.modify_cc(1, &req(SET_STATE, STATE_OFFLINE, 0, 0), &[]).unwrap();
        // Every parameter reaches the driver's; shares of the window
        // outside 0..=1 and a gate beyond 63 are refused.
        let given = Nscc {
            base_rtt: 1,
            target_delay: 2,
            disable_qa: 1,
            qa_gate: 4,
            qa_threshold: 5,
            gamma: 0.25,
            max_md_jump: 0.75,
            eta: 6.0,
            fi: 7.0,
            fi_scale: 8.0,
            adjust_bytes_threshold: 9,
            adjust_period_threshold: 10,
        };
        let mut r = req(SET_CONFIG, 0, 0, 1 << 16);
        r.nscc = &given;
        c.modify_cc(1, &r, &[1]).unwrap();
        let want = NsccParams {
            base_rtt_ns: 1,
            target_delay_ns: 2,
            disable_qa: true,
            qa_gate: 4,
            qa_threshold_ns: 5,
            gamma: 0.25,
            max_md_jump: 0.75,
            eta: 6.0,
            fi: 7.0,
            fi_scale: 8.0,
            adjust_bytes_threshold: 9,
            adjust_period_threshold_ns: 10,
        };
        assert_eq!(c.cc[&1].window(), Some((1 << 16, want)));
        for bad in [
            Nscc { gamma: 1.5, ..given },
            Nscc {
                gamma: f32::NAN,
                ..given
            },
            Nscc {
                max_md_jump: -0.1,
                ..given
            },
            Nscc { eta: -1.0, ..given },
            Nscc { qa_gate: 64, ..given },
        ] {
            r.nscc = &bad;
            assert_eq!(c.modify_cc(1, &r, &[1]), Err(EINVAL), "{bad:?}");
        }
        assert_eq!(
            c.cc[&1].window(),
            Some((1 << 16, want)),
            "a refused change changes nothing"
        );
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

/// # Safety
/// `p` is null (then `n` is 0) or holds `n` values.
unsafe fn slice_mut<'a, T>(p: *mut T, n: u32) -> Option<&'a mut [T]> {
    if n == 0 {
        return Some(&mut []);
    }
    // SAFETY: the caller's contract.
    (!p.is_null()).then(|| unsafe { std::slice::from_raw_parts_mut(p, n as usize) })
}

/// The program uses control API 1.0.1 or later (`set` nonzero): its EV
/// events carry their state. Returns whether it was announced.
#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_api_1_0_1(c: *const Ctx, set: c_int) -> c_int {
    with_ctl(c, 0, |_, ctl| {
        if set != 0 {
            ctl.api_1_0_1 = true;
        }
        c_int::from(ctl.api_1_0_1)
    })
}

/// What `mrc_ctl_query_device` reports of a context.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MrcxCtlInfo {
    pub evs_in_use: u32,
    /// The device sends endpoint operations of its own (a soft NIC).
    pub endpoint_ops: u32,
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_info(c: *const Ctx, info: *mut MrcxCtlInfo) -> c_int {
    if info.is_null() {
        return EINVAL;
    }
    with_ctl(c, EINVAL, |ctx, ctl| {
        out(
            info,
            MrcxCtlInfo {
                evs_in_use: ctl.evs_in_use(),
                endpoint_ops: u32::from(ctx.soft),
            },
        );
        0
    })
}

/// Modify (`req` not null) then read EV format profile `id`: its state,
/// mode, and up to `cap` field widths (`n_out`: how many it has).
#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_fmt(
    c: *const Ctx,
    id: u64,
    req: *const FmtReq,
    state: *mut u32,
    mode: *mut u32,
    widths_out: *mut u8,
    cap: u32,
    n_out: *mut u32,
) -> c_int {
    // SAFETY: null or a request from the C layer.
    let req = unsafe { req.as_ref() };
    let widths_in = match req {
        // SAFETY: `widths` holds `n_widths` bytes.
        Some(r) if r.set & SET_FIELDS != 0 => match unsafe { slice(r.widths, r.n_widths) } {
            Some(w) => w,
            None => return EINVAL,
        },
        _ => &[][..],
    };
    with_ctl(c, EINVAL, |_, ctl| {
        if let Some(r) = req {
            if let Err(e) = ctl.modify_fmt(id, r, widths_in) {
                return e;
            }
        }
        let p = match ctl.query_fmt(id) {
            Ok(p) => p,
            Err(e) => return e,
        };
        out(state, p.state);
        out(mode, p.mode);
        out(n_out, p.widths.len() as u32);
        if !widths_out.is_null() {
            let n = p.widths.len().min(cap as usize);
            // SAFETY: `widths_out` holds `cap` bytes.
            unsafe { std::ptr::copy_nonoverlapping(p.widths.as_ptr(), widths_out, n) };
        }
        0
    })
}

/// An EV profile's attributes as a query reports them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MrcxEvInfo {
    pub state: u32,
    pub mode: u32,
    pub format: u64,
    pub ev_count: u32,
    pub ev_min_active: u32,
    pub event_mask: u32,
}

/// Modify EV profile `id` as `req` asks (nothing set: a query) with the
/// operations' arrays `entries` (`*n_entries` of them, then how many
/// filled or needed) and `fields` (likewise); its attributes afterwards
/// into `info`. The EV states set are made on the QPs bound to it.
#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_ev(
    c: *const Ctx,
    id: u64,
    req: *const EvReq,
    entries: *mut EvEntry,
    n_entries: *mut u32,
    fields: *mut EvField,
    n_fields: *mut u32,
    info: *mut MrcxEvInfo,
) -> c_int {
    // SAFETY: a request from the C layer.
    let Some(r) = (unsafe { req.as_ref() }) else {
        return EINVAL;
    };
    let (mut ne, mut nf) = (0u32, 0u32);
    // SAFETY: the counts' pointers are null or the C layer's.
    unsafe {
        if let Some(n) = n_entries.as_ref() {
            ne = *n;
        }
        if let Some(n) = n_fields.as_ref() {
            nf = *n;
        }
    }
    // SAFETY: the arrays hold as many as their counts say.
    let (Some(ents), Some(flds)) = (unsafe { slice_mut(entries, ne) }, unsafe { slice_mut(fields, nf) }) else {
        return EINVAL;
    };
    with_ctl(c, EINVAL, |ctx, ctl| {
        if r.ev_op == EV_OP_QUERY_STATE {
            // The NIC's marks as its EV events have said so far.
            take_ev_events(ctx, ctl);
        }
        let r = ctl.modify_ev(id, r, ents, &mut ne, flds, &mut nf);
        out(n_entries, ne);
        out(n_fields, nf);
        let changes = match r {
            Ok(ch) => ch,
            Err(e) => return e,
        };
        if let Ok(p) = ctl.query_ev(id) {
            out(
                info,
                MrcxEvInfo {
                    state: p.state,
                    mode: p.mode,
                    format: p.format,
                    ev_count: p.ev_count,
                    ev_min_active: p.ev_min_active,
                    event_mask: p.event_mask,
                },
            );
        }
        if changes.is_empty() {
            return 0;
        }
        let key = id as u32;
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
            let b = lock(&q.binding).clone();
            if b.ev != Some(key) {
                continue;
            }
            for &(value, state) in &changes {
                if b.ev_values.contains(&value) {
                    if let Err(e) = set_ev_state(k, &lock(&q.qp), value, state) {
                        return e;
                    }
                }
            }
        }
        0
    })
}

/// Deny on QP `q`, which has just taken its EV profile's values at RTS,
/// the EVs the controller DENIED in the profile.
pub(crate) fn deny_at_rts(ctx: &Ctx, q: &Qp) -> Result<(), c_int> {
    let mut ctl = lock(&ctx.ctl);
    let b = lock(&q.binding).clone();
    let Some(denied) = b.ev.and_then(|id| ctl.ev.get(&id)).map(EvProfile::denied_values) else {
        return Ok(());
    };
    if denied.is_empty() {
        return Ok(());
    }
    if ctl.controller.is_none() {
        ctl.controller = Some(ctx.ctx.controller(EV_RING_LOG2).map_err(|_| EBUSY)?);
    }
    let Some(k) = ctl.controller.as_ref() else {
        return Err(EBUSY);
    };
    for v in denied {
        set_ev_state(k, &lock(&q.qp), v, EV_DENIED)?;
    }
    Ok(())
}

/// A CC profile as a query reports it; `config` points at the library's
/// copy of the NSCC parameters (valid until the profile next changes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MrcxCcInfo {
    pub state: u32,
    pub algorithm: u32,
    pub config: *const u8,
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_cc(c: *const Ctx, id: u64, req: *const CcReq, info: *mut MrcxCcInfo) -> c_int {
    // SAFETY: null or a request from the C layer.
    let req = unsafe { req.as_ref() };
    let config = match req {
        // SAFETY: `config` holds `config_len` bytes.
        Some(r) if r.set & SET_CONFIG != 0 => match unsafe { slice(r.config, r.config_len) } {
            Some(b) => b,
            None => return EINVAL,
        },
        _ => &[][..],
    };
    with_ctl(c, EINVAL, |_, ctl| {
        if let Some(r) = req {
            if let Err(e) = ctl.modify_cc(id, r, config) {
                return e;
            }
        }
        let Ok(key) = profile_id(id) else { return EINVAL };
        let p = ctl.cc.get(&key);
        out(
            info,
            MrcxCcInfo {
                state: p.map_or(STATE_INIT, |p| p.state),
                algorithm: p.map_or(CC_NONE, |p| p.algorithm),
                config: p
                    .and_then(|p| p.config.as_ref())
                    .map_or(std::ptr::null(), |b| b.as_ptr()),
            },
        );
        0
    })
}

/// Slots of the driver's EV-event ring (2^n).
const EV_RING_LOG2: u8 = 8;

/// The EV-event CQs by their C handle, and the context of each: a poll
/// names only the CQ.
static EV_CQS: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());

/// Make the CQ whose C handle is `handle` (an `mrc_cq` of this context)
/// the context's EV-event CQ, holding up to `entries` events (one per
/// context: EBUSY for a second).
#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_open_ev_cq(c: *const Ctx, handle: usize, entries: c_int) -> c_int {
    if handle == 0 || entries <= 0 {
        return EINVAL;
    }
    with_ctl(c, EINVAL, |ctx, ctl| {
        if ctl.ev_cq.is_some() {
            return EBUSY;
        }
        if ctl.controller.is_none() {
            match ctx.ctx.controller(EV_RING_LOG2) {
                Ok(k) => ctl.controller = Some(k),
                Err(_) => return EBUSY,
            }
        }
        ctl.ev_cq = Some(handle);
        ctl.ev_cq_entries = entries as usize;
        ctl.ev_pending.clear();
        ctl.ev_drops = 0;
        // Losses before the CQ existed are no one's.
        if let Some(Ok(n)) = ctl.controller.as_ref().map(Controller::events_lost) {
            ctl.ev_lost_seen = n;
        }
        lock(&EV_CQS).push((handle, c as usize));
        0
    })
}

/// Move the EV events of the device's ring into the EV-event CQ's
/// queue, as `mrcx_ctl_poll_ev_cq` returns them: events of QPs bound to
/// no profile, and states the profile's mask does not ask for, are
/// consumed and not kept. The queue holds the CQ's entries at most: the
/// rest stay in the ring (which the NIC drops from when it is full). The
/// next event queued counts the NIC's losses the driver has seen since
/// the last one.
/// Without an EV-event CQ the events are read for the NIC's marks alone
/// (`QUERY_EV_STATE`).
fn take_ev_events(ctx: &Ctx, ctl: &mut Ctl) {
    // The ring's losses so far (a device without the counter: none seen).
    if let Some(Ok(n)) = ctl.controller.as_ref().map(Controller::events_lost) {
        ctl.ev_drops = ctl.ev_drops.saturating_add(n.wrapping_sub(ctl.ev_lost_seen));
        ctl.ev_lost_seen = n;
    }
    let queue = ctl.ev_cq.is_some();
    while !queue || ctl.ev_pending.len() < ctl.ev_cq_entries {
        let Some(k) = ctl.controller.as_mut() else { return };
        let e = match k.poll_event() {
            Ok(Some(e)) => e,
            Ok(None) => return,
            // A malformed entry (the driver counts it): skip it.
            Err(_) => continue,
        };
        let (id, ev) = {
            // The map's lock held while the QP is read: a QP leaves the
            // map (under the ctl lock, held here) before it goes.
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
        // The ring's Good (0), AssumedBad (1), Denied (2) as the API's
        // state bits.
        let state = 1u32 << (e.new_state as u32);
        // The EV as the profile's array holds it (an explicit EV before
        // its expansion); an AUTO profile's: the value the QP carries.
        let value = match ctl.ev.get(&id).and_then(|p| p.ev_at(usize::from(e.ev_index))) {
            Some(v) => v as u16,
            // The device holds the values this library wrote: the UDP
            // format's 16 bits.
            None => ev.unwrap_or(e.ev as u16),
        };
        ctl.note_ev_state(id, e.qp, value, state);
        if !queue || ctl.ev.get(&id).is_none_or(|p| p.event_mask & state == 0) {
            continue;
        }
        ctl.ev_pending.push_back(MrcxEvEvent {
            profile_id: id,
            ev: u32::from(value),
            state,
            drop_count: std::mem::take(&mut ctl.ev_drops),
        });
    }
}

/// If `handle` is the context's EV-event CQ: whether it holds EV events
/// (taken from the device's ring first).
pub(crate) fn ev_cq_ready(ctx: &Ctx, handle: usize) -> Option<bool> {
    let mut ctl = lock(&ctx.ctl);
    if ctl.ev_cq != Some(handle) {
        return None;
    }
    take_ev_events(ctx, &mut ctl);
    Some(!ctl.ev_pending.is_empty())
}

/// The context's EV-event CQ, if any, and whether it holds EV events
/// (taken from the device's ring first).
pub(crate) fn ev_cq_take(ctx: &Ctx) -> Option<(usize, bool)> {
    let mut ctl = lock(&ctx.ctl);
    let h = ctl.ev_cq?;
    take_ev_events(ctx, &mut ctl);
    Some((h, !ctl.ev_pending.is_empty()))
}

/// The CQ `handle` of `ctx` is destroyed: if it was the EV-event CQ, the
/// context has none from now on (`mrcx_destroy_cq`).
pub(crate) fn ev_cq_gone(ctx: &Ctx, handle: usize) {
    let mut ctl = lock(&ctx.ctl);
    if ctl.ev_cq == Some(handle) {
        ctl.ev_cq = None;
        ctl.ev_pending.clear();
        lock(&EV_CQS).retain(|&(h, _)| h != handle);
    }
}

/// An EV event as the C layer reads it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MrcxEvEvent {
    pub profile_id: u32,
    pub ev: u32,
    /// `EV_GOOD`, `EV_ASSUMED_BAD`, `EV_DENIED`.
    pub state: u32,
    /// EV events lost since the one before (the device's ring had no
    /// room), as far as the driver has seen.
    pub drop_count: u32,
}

/// Up to `max` EV events of the EV-event CQ `handle` into `events`: how
/// many, or a negative errno (`-EINVAL`: not an EV-event CQ); whether the
/// program announced API 1.0.1 into `api_1_0_1`. Events of
/// QPs bound to no profile, and states the profile's mask does not ask
/// for, are consumed and not returned.
#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_poll_ev_cq(
    handle: usize,
    max: c_int,
    events: *mut MrcxEvEvent,
    api_1_0_1: *mut c_int,
) -> c_int {
    if max < 0 || (max > 0 && events.is_null()) {
        return -EINVAL;
    }
    let Some(c) = guard(None, || {
        lock(&EV_CQS).iter().find(|&&(h, _)| h == handle).map(|&(_, c)| c)
    }) else {
        return -EINVAL;
    };
    with_ctl(c as *const Ctx, -EINVAL, |ctx, ctl| {
        out(api_1_0_1, c_int::from(ctl.api_1_0_1));
        if ctl.controller.is_none() {
            return -EINVAL;
        }
        let mut n = 0usize;
        while n < max as usize {
            if ctl.ev_pending.is_empty() {
                take_ev_events(ctx, ctl);
            }
            let Some(ev) = ctl.ev_pending.pop_front() else { break };
            // SAFETY: `events` holds `max` entries.
            unsafe { *events.add(n) = ev };
            n += 1;
        }
        n as c_int
    })
}

/// Endpoint operation kinds (`enum mrc_ctl_ep_op_type`).
const EP_EV_PROBE: u32 = 0;
const EP_PORT_STATUS_UPDATE: u32 = 1;
const EOPNOTSUPP: c_int = 95;
const EAGAIN: c_int = 11;
const ETIMEDOUT: c_int = 110;

/// Send one endpoint operation to the NIC whose GID is `gid` (16 bytes),
/// with DSCP `dscp` (0..=63): its request id into `id`; 0 or an errno
/// (EOPNOTSUPP: the device sends none; EAGAIN: too many await an answer).
#[no_mangle]
pub unsafe extern "C" fn mrcx_ctl_endpoint_post(
    c: *const Ctx,
    kind: u32,
    gid: *const u8,
    ev: u32,
    port: u8,
    dscp: u8,
    id: *mut u32,
) -> c_int {
    if gid.is_null() || id.is_null() || dscp > driver::device::MAX_DSCP {
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
        EP_EV_PROBE => driver::device::EndpointRequest::EvProbe {
            peer,
            ev,
            port,
            dscp: Some(dscp),
        },
        EP_PORT_STATUS_UPDATE => driver::device::EndpointRequest::PortStatusUpdate {
            peer,
            ev,
            dscp: Some(dscp),
        },
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
