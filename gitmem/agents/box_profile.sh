# The login profile of the agent's HOME in gitmem's box (gitmem.agents.sandbox_mounts), bound read-only as
# ~/.profile. A login shell inside the box (Codex runs its commands with `bash -lc`) reads /etc/profile, which
# on Debian resets PATH, so `gitmem` from a venv was "command not found"; this puts back the PATH the agent
# was started with. The agent cannot change this file.
if [ -n "${GITMEM_AGENT_PATH-}" ]; then
  PATH=$GITMEM_AGENT_PATH
  export PATH
fi
