-- Argo CD health of an agentjobs.io Execution or Phase, read from the status the operator
-- writes (status.status, R23). Install it as resource.customizations.health.agentjobs.io_Execution
-- and ..._Phase in argocd-cm (argocd-cm-patch.yaml beside this file does both).
--   pending, running, no status yet, or a spec not yet seen -> Progressing
--   completed -> Healthy
--   failed, interrupted (its pod vanished or an interrupt was asked for) -> Degraded
--   cancelled (a person asked for it to stop) -> Suspended
local hs = {}
local status = obj.status

local function condition_message(condition_type)
  if status.conditions == nil then
    return ""
  end
  for _, condition in ipairs(status.conditions) do
    if condition.type == condition_type and condition.message ~= nil then
      return condition.message
    end
  end
  return ""
end

local function told(verdict)
  local detail = condition_message("Finished")
  if status.failureClassification ~= nil then
    verdict = verdict .. " (" .. status.failureClassification .. ")"
  end
  if detail ~= "" then
    return verdict .. ": " .. detail
  end
  return verdict
end

if status == nil or status.status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to report on it"
  return hs
end

-- A change to the spec (a cancel, an interrupt) counts once the operator has seen it.
if obj.metadata.generation ~= nil and status.observedGeneration ~= nil
    and status.observedGeneration < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to see generation " .. obj.metadata.generation
  return hs
end

local state = status.status
if state == "pending" or state == "running" then
  hs.status = "Progressing"
  -- Reconciling is true while pending or running, and only a true condition has a message.
  local detail = condition_message("Reconciling")
  if status.currentPhase ~= nil then
    hs.message = state .. ", phase " .. status.currentPhase
  elseif detail ~= "" then
    hs.message = state .. ": " .. detail
  else
    hs.message = state
  end
elseif state == "completed" then
  hs.status = "Healthy"
  hs.message = told("completed")
elseif state == "failed" or state == "interrupted" then
  hs.status = "Degraded"
  hs.message = told(state)
elseif state == "cancelled" then
  hs.status = "Suspended"
  hs.message = told("cancelled")
else
  hs.status = "Unknown"
  hs.message = "Unknown status " .. tostring(state)
end
return hs
