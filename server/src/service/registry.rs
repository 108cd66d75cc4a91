//! Who is connected and what is waiting: the agents and the edits that wait for the
//! editor's answer, as reported by `verbatim/status`.

use std::collections::BTreeMap;

use verbatim_engine::position::PositionEncoding;

use crate::service::clock::now_rfc3339;
use crate::service::protocol::{AgentStatus, PendingStatus};

/// An agent connection, known once it has sent `initialize`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentInfo {
    pub id: u64,
    pub name: String,
    pub version: Option<String>,
    pub connected_at: String,
    /// The position encoding negotiated with this agent.
    pub encoding: PositionEncoding,
    pub access: crate::service::access::Access,
    /// The agent's `initializationOptions`.
    pub options: crate::service::protocol::AgentOptions,
    /// The journal's session of its writes: the connection's (see [`session_of`]), or
    /// what the agent names (a hook's `session_id`).
    pub session: String,
    /// The journal's turn of the write at hand, when the agent names one.
    pub turn: Option<String>,
}

impl AgentInfo {
    /// The same agent, for one write that names its turn (and, from a hook, its session).
    pub fn for_write(&self, session: Option<&str>, turn: Option<&str>) -> Self {
        let mut agent = self.clone();
        if let Some(session) = session.filter(|session| !session.trim().is_empty()) {
            session.clone_into(&mut agent.session);
        }
        agent.turn = turn.filter(|turn| !turn.trim().is_empty()).map(str::to_owned).or(agent.turn);
        agent
    }
}

/// The session of connection `id` of this process: unique across processes and
/// restarts (the process's start time and pid, then the id).
pub fn session_of(id: u64) -> String {
    static PREFIX: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let prefix = PREFIX.get_or_init(|| {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_nanos());
        format!("{nanos:x}-{}", std::process::id())
    });
    format!("{prefix}.{id}")
}

/// Agents and pending edits.
#[derive(Debug, Default)]
pub struct Registry {
    agents: BTreeMap<u64, AgentInfo>,
    pending: BTreeMap<u64, PendingStatus>,
    next_agent: u64,
    next_pending: u64,
}

impl Registry {
    /// Hands out the id of a new agent connection.
    pub fn next_agent_id(&mut self) -> u64 {
        self.next_agent += 1;
        self.next_agent
    }

    pub fn add_agent(&mut self, agent: AgentInfo) {
        self.agents.insert(agent.id, agent);
    }

    pub fn remove_agent(&mut self, id: u64) {
        self.agents.remove(&id);
    }

    /// Records an edit that now waits for the editor; returns its id. An edit
    /// offered again keeps the id it had (`again`).
    pub fn add_pending(&mut self, agent: &AgentInfo, summary: &str, uris: Vec<String>, again: Option<u64>) -> u64 {
        let id = again.unwrap_or_else(|| {
            self.next_pending += 1;
            self.next_pending
        });
        self.pending.insert(
            id,
            PendingStatus {
                id,
                agent_id: agent.id,
                agent: agent.name.clone(),
                summary: summary.to_owned(),
                uris,
                since: now_rfc3339(),
            },
        );
        id
    }

    pub fn remove_pending(&mut self, id: u64) {
        self.pending.remove(&id);
    }

    pub fn agents(&self) -> Vec<AgentStatus> {
        self.agents
            .values()
            .map(|agent| AgentStatus {
                id: agent.id,
                name: agent.name.clone(),
                access: agent.access,
                version: agent.version.clone(),
                connected_at: agent.connected_at.clone(),
                pending_edits: self.pending.values().filter(|pending| pending.agent_id == agent.id).count(),
            })
            .collect()
    }

    pub fn pending(&self) -> Vec<PendingStatus> {
        self.pending.values().cloned().collect()
    }
}
